// A GraphDefinition's keepalives carried by a CUDA user object, so graph clones keep them too.
#include <atomic>
#include <mutex>
#include <vector>

#include "graph_keepalive.h"
#include "nanocuda/driver/driver_api.h"
#include "nanocuda/launch/graph_definition.h"

namespace nanocuda {

namespace {
std::mutex g_dropped_mutex;
std::vector<Pins*> g_dropped;  // holds the driver let go of, not yet released
std::atomic<void (*)()> g_dropped_hook{nullptr};

// The user object's destructor: runs on a driver thread, so it only queues.
void CUDA_CB drop_pins(void* data) {
  {
    std::lock_guard<std::mutex> lock(g_dropped_mutex);
    g_dropped.push_back(static_cast<Pins*>(data));
  }
  if (auto hook = g_dropped_hook.load()) hook();
}

}  // namespace

void pin_to_graph(CUgraph graph, const Pins& pins) {
  const auto& api = detail::driver();
  if (!api.cuUserObjectCreate || !api.cuGraphRetainUserObject) return;
  auto* hold = new Pins(pins);
  CUuserObject obj = nullptr;
  if (api.cuUserObjectCreate(&obj, hold, drop_pins, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC) != CUDA_SUCCESS || !obj) {
    delete hold;
    return;
  }
  // MOVE: the graph takes our one reference; the object dies with the last graph holding it.
  if (api.cuGraphRetainUserObject(graph, obj, 1, CU_GRAPH_USER_OBJECT_MOVE) != CUDA_SUCCESS)
    (void)api.cuUserObjectRelease(obj, 1);  // runs drop_pins
}

void GraphDefinition::set_dropped_hook(void (*hook)()) noexcept { g_dropped_hook.store(hook); }

void GraphDefinition::release_dropped() noexcept {
  std::vector<Pins*> dropped;
  {
    std::lock_guard<std::mutex> lock(g_dropped_mutex);
    dropped.swap(g_dropped);
  }
  for (Pins* p : dropped) delete p;  // may free kernels' libraries, events (CUDA calls)
}

}  // namespace nanocuda
