// CUDA checkpoint/restore of another process (cuCheckpointProcess*, driver CUDA 12.8 and newer).
#pragma once

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace nanocuda::checkpoint {

// What cuCheckpointProcessGetState reports, by cuda.core's names.
enum class ProcessState { running, locked, checkpointed, failed };
[[nodiscard]] const char* state_name(ProcessState s) noexcept;

using Uuid = std::array<unsigned char, 16>;
// "GPU-xxxxxxxx-xxxx-..." (nvidia-smi) or "xxxxxxxx-xxxx-..." (cuda.core): 32 hex digits, hyphens
// and a leading "GPU-" optional; ValueError otherwise.
[[nodiscard]] Uuid parse_uuid(const std::string& text);

// DriverTooOldError below CUDA 12.8 (the first driver with these entry points).
void require_support();

// Each call checks `pid` (ValueError unless > 0) and the driver version; driver errors are
// nanocuda Errors naming the call and the process.
[[nodiscard]] ProcessState state(int pid);
[[nodiscard]] int restore_thread_id(int pid);
void lock(int pid, unsigned timeout_ms);  // 0: no timeout
void checkpoint(int pid);
// `gpu_pairs`: (checkpointed GPU, GPU to restore onto) for migration; empty: the same GPUs.
void restore(int pid, const std::vector<std::pair<Uuid, Uuid>>& gpu_pairs);
void unlock(int pid);

}  // namespace nanocuda::checkpoint
