/* exchange_step.h: one step of the trainer's model (model_ops.h, on the CPU or the GPU) through
 * an exchange: the gradient in, the next parameters out, the gradients zero after it on every
 * device and every topology. Here, above both, so that src/model knows no exchange. */
#ifndef PSRING_EXCHANGE_STEP_H
#define PSRING_EXCHANGE_STEP_H
#include "exchange/exchange.h"
#include "model/model_ops.h"

/* 0, or -1 when the exchange failed (it printed why) */
int exchange_step_model(exchange_t *ex, model_t *md, float lr);

#endif
