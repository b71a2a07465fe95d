// CUDA checkpoint/restore: the version gate, the argument structs and the checked calls.
#include "nanocuda/core/checkpoint.h"

#include <cuda.h>

#include <cctype>
#include <string_view>

#include "nanocuda/driver/check.h"
#include "nanocuda/driver/driver_version.h"

namespace nanocuda::checkpoint {

namespace {

constexpr int kCheckpointDriverVersion = 12080;

void check_pid(int pid, const char* call) {
  if (pid <= 0) throw ValueError(std::string(call), "pid must be a positive int, got " + std::to_string(pid));
  require_support();
}

std::string process(int pid) { return "process " + std::to_string(pid); }

}  // namespace

const char* state_name(ProcessState s) noexcept {
  switch (s) {
    case ProcessState::running: return "running";
    case ProcessState::locked: return "locked";
    case ProcessState::checkpointed: return "checkpointed";
    case ProcessState::failed: return "failed";
  }
  return "?";
}

Uuid parse_uuid(const std::string& text) {
  std::string hex;
  std::string_view s = text;
  if (s.substr(0, 4) == "GPU-") s.remove_prefix(4);
  for (char c : s)
    if (c != '-') hex += c;
  Uuid out{};
  bool ok = hex.size() == 32;
  for (std::size_t i = 0; ok && i < 16; ++i) {
    const char hi = hex[2 * i], lo = hex[2 * i + 1];
    ok = std::isxdigit(static_cast<unsigned char>(hi)) && std::isxdigit(static_cast<unsigned char>(lo));
    if (ok) out[i] = static_cast<unsigned char>(std::stoi(std::string{hi, lo}, nullptr, 16));
  }
  if (!ok)
    throw ValueError("nanocuda::checkpoint::parse_uuid", "GPU UUID string must be 32 hex characters (with optional "
                     "hyphens), got '" + text + "'");
  return out;
}

void require_support() { detail::require_driver_version(kCheckpointDriverVersion, "CUDA checkpointing"); }

ProcessState state(int pid) {
  check_pid(pid, "nanocuda::checkpoint::state");
  CUprocessState s = CU_PROCESS_STATE_RUNNING;
  NANOCUDA_CALL(cuCheckpointProcessGetState, [&] { return process(pid); }, pid, &s);
  switch (s) {
    case CU_PROCESS_STATE_RUNNING: return ProcessState::running;
    case CU_PROCESS_STATE_LOCKED: return ProcessState::locked;
    case CU_PROCESS_STATE_CHECKPOINTED: return ProcessState::checkpointed;
    case CU_PROCESS_STATE_FAILED: return ProcessState::failed;
  }
  throw Error(CUDA_ERROR_UNKNOWN, "cuCheckpointProcessGetState",
              process(pid) + " is in an unknown state " + std::to_string(static_cast<int>(s)));
}

int restore_thread_id(int pid) {
  check_pid(pid, "nanocuda::checkpoint::restore_thread_id");
  int tid = 0;
  NANOCUDA_CALL(cuCheckpointProcessGetRestoreThreadId, [&] { return process(pid); }, pid, &tid);
  return tid;
}

void lock(int pid, unsigned timeout_ms) {
  check_pid(pid, "nanocuda::checkpoint::lock");
  CUcheckpointLockArgs args{};
  args.timeoutMs = timeout_ms;
  NANOCUDA_CALL(cuCheckpointProcessLock, [&] { return process(pid); }, pid, &args);
}

void checkpoint(int pid) {
  check_pid(pid, "nanocuda::checkpoint::checkpoint");
  NANOCUDA_CALL(cuCheckpointProcessCheckpoint, [&] { return process(pid); }, pid, nullptr);
}

void restore(int pid, const std::vector<std::pair<Uuid, Uuid>>& gpu_pairs) {
  check_pid(pid, "nanocuda::checkpoint::restore");
  std::vector<CUcheckpointGpuPair> pairs(gpu_pairs.size());
  for (std::size_t i = 0; i < gpu_pairs.size(); ++i)
    for (std::size_t b = 0; b < 16; ++b) {
      pairs[i].oldUuid.bytes[b] = static_cast<char>(gpu_pairs[i].first[b]);
      pairs[i].newUuid.bytes[b] = static_cast<char>(gpu_pairs[i].second[b]);
    }
  CUcheckpointRestoreArgs args{};
  args.gpuPairs = pairs.data();
  args.gpuPairsCount = static_cast<unsigned>(pairs.size());
  NANOCUDA_CALL(cuCheckpointProcessRestore, [&] { return process(pid); }, pid, pairs.empty() ? nullptr : &args);
}

void unlock(int pid) {
  check_pid(pid, "nanocuda::checkpoint::unlock");
  NANOCUDA_CALL(cuCheckpointProcessUnlock, [&] { return process(pid); }, pid, nullptr);
}

}  // namespace nanocuda::checkpoint
