// A CUDA event: a marker in a stream, for ordering between streams and for timing.
#pragma once

#include <cuda.h>

#include <memory>
#include <string>
#include <utility>

#include "nanocuda/driver/unique_handle.h"
#include "nanocuda/core/device.h"
#include "nanocuda/core/stream_ref.h"

namespace nanocuda {

namespace detail {
void destroy_event(CUevent event) noexcept;
}

class Event {
 public:
  // A new event on `device`; timing events cost a little more to record.
  explicit Event(const Device& device, bool timing = true, bool blocking_sync = false);
  // A new event in `context` (a green context's: the stream it is recorded on lives there).
  Event(const Device& device, const Context& context, bool timing, bool blocking_sync = false);
  // Adopts `handle` (destroyed with the Event); made by create_ipc_event/import_ipc_event.
  // `recorded`: whether it may already have been recorded (an adopted handle may have been);
  // `imported`: opened from another process's export (it has no context of this process's).
  Event(const Device& device, CUevent handle, bool timing, bool interprocess, bool blocking_sync = false,
        bool recorded = true, bool imported = false);

  // The raw handle; nullptr once closed. Calls that use the event take checked_handle().
  [[nodiscard]] CUevent handle() const noexcept { return handle_.get(); }
  // The handle, or ValueError naming `call` when the event is closed.
  [[nodiscard]] CUevent checked_handle(const char* call) const;
  [[nodiscard]] const Device& device() const noexcept { return device_; }
  // The context the event was made in: the device's primary one, or a green context.
  [[nodiscard]] const Context& context() const noexcept { return *context_; }
  [[nodiscard]] bool is_timing() const noexcept { return timing_; }
  [[nodiscard]] bool is_interprocess() const noexcept { return interprocess_; }
  // CU_EVENT_BLOCKING_SYNC: sync() yields the CPU instead of spinning.
  [[nodiscard]] bool is_blocking_sync() const noexcept { return blocking_sync_; }
  // Opened from another process's IPC export (Event.from_ipc_descriptor).
  [[nodiscard]] bool is_imported() const noexcept { return imported_; }
  // Recorded at least once (or adopted, so possibly recorded by its other owner).
  [[nodiscard]] bool is_recorded() const noexcept { return recorded_; }
  // An imported event's 64-byte IPC handle, kept as opened (export_ipc_event returns it).
  [[nodiscard]] const std::string& imported_handle() const noexcept { return imported_handle_; }
  void set_imported_handle(std::string handle) { imported_handle_ = std::move(handle); }

  // Destroys the event now (idempotent); later uses raise ValueError naming the call.
  void close() noexcept;
  [[nodiscard]] bool is_closed() const noexcept { return !handle_; }

  // TypeError for an IPC event recorded before (or opened from another process): another
  // process may be waiting on what it marks; make a new one instead.
  void record(StreamRef stream);
  // Blocks until the work before the record is done.
  void sync() const;
  // True once the recorded work has completed.
  [[nodiscard]] bool query() const;
  // Milliseconds from `start` to this event; both must be timing events that completed.
  [[nodiscard]] float elapsed_time_since(const Event& start) const;

  [[nodiscard]] std::string describe() const;
  // Notes a record made elsewhere (a graph's event-record node), for elapsed_time's check.
  void note_recorded() const noexcept { recorded_ = true; }

 private:
  Device device_;
  std::shared_ptr<Context> context_;  // the event lives in this context
  detail::UniqueHandle<CUevent, detail::destroy_event> handle_;
  bool timing_;
  bool interprocess_ = false;
  bool blocking_sync_ = false;
  bool imported_ = false;
  std::string imported_handle_;
  // Recorded at least once (imported and adopted events count as recorded: another owner may
  // have recorded them); lets elapsed_time name an unrecorded event instead of INVALID_HANDLE.
  mutable bool recorded_ = false;
};

}  // namespace nanocuda
