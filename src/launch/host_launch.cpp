// host_launch: one host function on a stream, its data released after its one call.
#include "nanocuda/launch/host_launch.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "nanocuda/core/context.h"
#include "nanocuda/core/graph_memory_resource.h"
#include "nanocuda/driver/check.h"

namespace nanocuda {

namespace {

struct Once {
  CUhostFn run;
  void* data;
  std::shared_ptr<void> keep;
  static void CUDA_CB call(void* self) {
    auto* once = static_cast<Once*>(self);
    once->run(once->data);
    delete once;  // releases `keep` on the callback thread (its deleter takes what it needs)
  }
};

}  // namespace

void host_launch(StreamRef stream, CUhostFn run, void* data, std::shared_ptr<void> keep, const char* call) {
  if (is_capturing(stream))
    throw std::runtime_error(std::string(call) + ": " + stream.describe() +
                             " is capturing a graph; add a host node with GraphBuilder.callback instead");
  auto once = std::make_unique<Once>(Once{run, data, std::move(keep)});
  CurrentContext guard(stream.context());
  NANOCUDA_CALL(cuLaunchHostFunc, [&] { return std::string(call) + " on " + stream.describe(); }, stream.handle(),
                &Once::call, once.get());
  once.release();  // the driver calls Once::call, which deletes it
}

}  // namespace nanocuda
