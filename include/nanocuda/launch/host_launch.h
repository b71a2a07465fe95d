// Stream-ordered host work: a host function run once, after the work queued before it on a stream.
#pragma once

#include <cuda.h>

#include <memory>

#include "nanocuda/core/stream_ref.h"

namespace nanocuda {

// Queues `run(data)` on `stream` (cuLaunchHostFunc): it runs on the driver's callback thread
// once the work queued before it is done, and the work queued after it waits for it. `keep`
// (what `data` needs) is released right after the call, on that thread. A stream capturing a
// graph is refused (std::runtime_error naming `call`): a captured host node runs at every
// replay, so its data cannot be released after one call (GraphBuilder::host_callback keeps it).
void host_launch(StreamRef stream, CUhostFn run, void* data, std::shared_ptr<void> keep, const char* call);

}  // namespace nanocuda
