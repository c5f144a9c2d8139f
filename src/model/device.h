/* device.h: where the model trains (--device), the one word the model, the exchanges and the
 * trainer share about it. */
#ifndef PSRING_DEVICE_H
#define PSRING_DEVICE_H

typedef enum { DEVICE_CPU, DEVICE_CUDA } device_t;

#endif
