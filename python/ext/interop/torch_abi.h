// Reading torch tensors through libtorch's stable C ABI (aoti_torch_*), resolved at run time.
#pragma once

#include <Python.h>

#include <string>
#include <vector>

#include "interop/dlpack_exchange.h"

namespace nanocuda::py::torch_abi {

// Makes read() ready, once per process: resolves the aoti_torch_* functions in a libtorch the
// process already loaded (dlopen RTLD_NOLOAD of each of `libraries` in turn; nothing is loaded
// here), finds where a torch.Tensor object keeps its at::Tensor by comparing the candidate
// words with the TensorImpl address torch itself reports for each probe, then checks that
// read() reports exactly what `producer` (torch's DLPack exchange function) reports on every
// probe. `probes` is a list of (tensor, tensor._cdata) pairs. Returns "" when ready, else why
// not (read() then stays unused). After a success further calls return "" at once.
std::string prepare(const std::vector<std::string>& libraries, PyObject* probes,
                    TensorViewReader producer);

// Whether prepare() succeeded in this process.
bool ready();

// A TensorViewReader for exact torch.Tensor / nn.Parameter objects: a handful of C calls into
// libtorch. Anything it does not handle (complex dtypes, whose conjugate bit the ABI cannot
// show; other layouts, devices or dtypes; an error inside torch) goes to the producer's own
// function, so results and errors match torch's exchange API.
int read(void* py_object, dlpack::Tensor* out);

// read() for callers that need only the address, device and dtype (a launch's pointer slot):
// the same checks and fallback, without the dim, sizes and strides calls (sizes only where it
// must refuse a nested tensor); `out->ndim` is -1 and shape/strides are null unless the
// fallback answered.
int read_pointer(void* py_object, dlpack::Tensor* out);

// `reader`'s pointer-only form (read_pointer for read), else `reader`; and back.
TensorViewReader pointer_only(TensorViewReader reader);
TensorViewReader with_geometry(TensorViewReader reader);

}  // namespace nanocuda::py::torch_abi
