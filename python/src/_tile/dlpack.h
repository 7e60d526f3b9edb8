/* dlpack.h - the DLPack structures the extension reads (the legacy,
 * unversioned ABI that every producer's `__dlpack__()` returns by default:
 * a PyCapsule named "dltensor" holding a DLManagedTensor*).
 *
 * Written from the DLPack specification (v0.8 layout): a consumer renames
 * the capsule to "used_dltensor" when it takes the tensor and calls the
 * tensor's deleter when it is done with it. */
#ifndef TILE_PY_DLPACK_H
#define TILE_PY_DLPACK_H

#include <stdint.h>

typedef enum {
    kDLCPU = 1,
    kDLCUDA = 2,
    kDLCUDAHost = 3,
    kDLCUDAManaged = 13,
} DLDeviceType;

typedef struct {
    int32_t device_type; /* DLDeviceType */
    int32_t device_id;
} DLDevice;

typedef enum {
    kDLInt = 0,
    kDLUInt = 1,
    kDLFloat = 2,
    kDLBfloat = 4,
    kDLBool = 6,
} DLDataTypeCode;

typedef struct {
    uint8_t code; /* DLDataTypeCode */
    uint8_t bits;
    uint16_t lanes;
} DLDataType;

typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides; /* in elements; NULL: compact row-major */
    uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

#endif
