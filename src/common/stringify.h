/* stringify.h: a numeric constant as a string literal, so that help text states a default from
 * the one #define that sets it ("(default " STRINGIFY(PS_CREDIT_DEFAULT) ")") instead of a copy
 * of its value. Only for constants that are a plain integer literal. */
#ifndef PSRING_STRINGIFY_H
#define PSRING_STRINGIFY_H

#define STRINGIFY_LITERAL(x) #x
#define STRINGIFY(x) STRINGIFY_LITERAL(x)

#endif
