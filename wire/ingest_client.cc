#include "wire/ingest_client.h"

#include <algorithm>
#include <deque>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "net/idle_deadline.h"

namespace meridian {
namespace {

// The batches of one stream that were sent and not yet acknowledged.
struct Window {
  explicit Window(int limit) : limit(limit) {}
  bool HasRoom() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return reader_done || static_cast<int>(in_flight.size()) < limit;
  }
  const int limit;
  absl::Mutex mu;
  std::deque<size_t> in_flight ABSL_GUARDED_BY(mu);  // in send order
  bool reader_done ABSL_GUARDED_BY(mu) = false;
};

// Counts an ack of batch `i` in `report`.
void Count(const v1::Ack& ack, size_t i, SendReport* report) {
  switch (ack.result()) {
    case v1::Ack::RESULT_STORED:
      ++report->stored;
      report->spans_stored += ack.spans_stored();
      if (ack.spans_invalid() > 0) {
        report->spans_invalid += ack.spans_invalid();
        report->invalid_reasons.push_back(ack.error());
      }
      break;
    case v1::Ack::RESULT_DUPLICATE:
      ++report->duplicate;
      break;
    default:
      ++report->rejected;
      report->rejections.push_back(ack.error());
      report->rejected_batches.push_back(i);
  }
}

// The collector's `retry-after-ms` trailing metadata on an overloaded
// stream (0 to 60,000 ms), or 0.
int64_t RetryAfterMs(const grpc::ClientContext& context) {
  const auto& trailers = context.GetServerTrailingMetadata();
  auto it = trailers.find("retry-after-ms");
  int64_t ms = 0;
  if (it == trailers.end() ||
      !absl::SimpleAtoi(absl::string_view(it->second.data(), it->second.size()),
                        &ms)) {
    return 0;
  }
  return std::clamp<int64_t>(ms, 0, 60000);
}

}  // namespace

void SendReport::Add(const SendReport& other) {
  stored += other.stored;
  duplicate += other.duplicate;
  rejected += other.rejected;
  spans_stored += other.spans_stored;
  spans_invalid += other.spans_invalid;
  invalid_reasons.insert(invalid_reasons.end(), other.invalid_reasons.begin(),
                         other.invalid_reasons.end());
  streams += other.streams;
  rejections.insert(rejections.end(), other.rejections.begin(),
                    other.rejections.end());
}

std::vector<absl::StatusOr<SendReport>> SendConcurrently(
    const std::function<std::shared_ptr<grpc::Channel>()>& connect,
    const std::vector<std::vector<v1::Batch>>& agents,
    const std::vector<int>& passes) {
  std::vector<absl::StatusOr<SendReport>> reports(agents.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < agents.size(); ++i) {
    threads.emplace_back([&, i] {
      IngestClient client(connect());
      SendReport total;
      for (int pass = 0; pass < (passes.empty() ? 1 : passes[i]); ++pass) {
        auto report = client.SendAll(agents[i]);
        if (!report.ok()) {
          reports[i] = report.status();
          return;
        }
        total.Add(*report);
      }
      reports[i] = std::move(total);
    });
  }
  for (std::thread& thread : threads) thread.join();
  return reports;
}

IngestClient::IngestClient(std::shared_ptr<grpc::Channel> channel)
    : stub_(v1::Ingest::NewStub(channel)) {}

void IngestClient::Cancel() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
  if (in_flight_ != nullptr) in_flight_->TryCancel();
}

bool IngestClient::Begin(grpc::ClientContext* context) {
  absl::MutexLock lock(&mu_);
  if (cancelled_) return false;
  in_flight_ = context;
  return true;
}

void IngestClient::End() {
  absl::MutexLock lock(&mu_);
  in_flight_ = nullptr;
}

bool IsPermanentRefusal(absl::StatusCode code) {
  return code == absl::StatusCode::kUnauthenticated ||
         code == absl::StatusCode::kPermissionDenied ||
         code == absl::StatusCode::kUnimplemented ||
         code == absl::StatusCode::kInvalidArgument;
}

grpc::Status IngestClient::Stream(grpc::ClientContext* context,
                                  const std::vector<v1::Batch>& batches,
                                  const std::vector<size_t>& todo,
                                  const SendOptions& options,
                                  std::vector<bool>* acked, SendReport* report,
                                  bool* expired) {
  IdleDeadline idle(context, options.ack_timeout);
  auto stream = stub_->Stream(context);
  Window window(options.window);

  std::thread reader([&] {
    v1::Ack ack;
    while (stream->Read(&ack)) {
      idle.Progress();
      absl::MutexLock lock(&window.mu);
      if (window.in_flight.empty()) {  // an ack for nothing: give up
        context->TryCancel();          // this stream; unacked are resent
        break;
      }
      size_t i = window.in_flight.front();
      window.in_flight.pop_front();
      (*acked)[i] = true;
      Count(ack, i, report);
    }
    absl::MutexLock lock(&window.mu);
    window.reader_done = true;
  });

  for (size_t i : todo) {
    {
      absl::MutexLock lock(&window.mu);
      window.mu.Await(absl::Condition(&window, &Window::HasRoom));
      if (window.reader_done) break;
      window.in_flight.push_back(i);
    }
    if (!stream->Write(batches[i])) break;
  }
  stream->WritesDone();
  reader.join();
  const grpc::Status status = stream->Finish();
  *expired = idle.expired();
  return status;
}

absl::StatusOr<SendReport> IngestClient::SendAll(
    const std::vector<v1::Batch>& batches, const SendOptions& options) {
  SendReport report;
  retry_after_ms_ = 0;
  std::vector<bool> acked(batches.size(), false);
  std::string last_error;
  const absl::Status cancelled =
      absl::CancelledError("sending was cancelled: the sender is stopping");
  for (int attempt = 0; attempt < options.max_streams; ++attempt) {
    std::vector<size_t> todo;
    for (size_t i = 0; i < batches.size(); ++i) {
      if (!acked[i]) todo.push_back(i);
    }
    if (todo.empty()) return report;
    if (attempt > 0) {
      // Backoff between reconnects, not synchronisation: 50 ms, 100 ms, ...
      // Cancel() cuts it short.
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(
          absl::Condition(&cancelled_),
          absl::Milliseconds(std::min(50 << (attempt - 1), 2000)));
    }
    grpc::ClientContext context;
    if (!Begin(&context)) return cancelled;
    ++report.streams;
    bool expired = false;
    const grpc::Status status =
        Stream(&context, batches, todo, options, &acked, &report, &expired);
    End();
    retry_after_ms_ =
        status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED
            ? RetryAfterMs(context)
            : 0;
    const int64_t unacked = std::count(acked.begin(), acked.end(), false);
    if (unacked == 0) return report;
    // A collector that stayed silent that long would stay silent on the
    // next stream too.
    if (expired) {
      return absl::DeadlineExceededError(absl::StrCat(
          "the collector acknowledged nothing for ",
          absl::ToInt64Milliseconds(options.ack_timeout), " ms; ", unacked,
          " of ", batches.size(), " batches unacknowledged"));
    }
    {
      absl::MutexLock lock(&mu_);
      if (cancelled_) return cancelled;
    }
    // A refusal that another stream would meet again (no token, a token
    // without the scope, a server without the service) ends it now: its
    // code and words, not "unacknowledged, try again".
    if (IsPermanentRefusal(
            static_cast<absl::StatusCode>(status.error_code()))) {
      return absl::Status(
          static_cast<absl::StatusCode>(status.error_code()),
          absl::StrCat(
              "the collector refused the stream: ", status.error_message(),
              "; ", unacked, " of ", batches.size(),
              " batches unsent (sending again cannot help)"));
    }
    if (!status.ok()) {
      last_error = absl::StrCat(status.error_message(), " (code ",
                                static_cast<int>(status.error_code()), ")");
    }
  }
  if (std::all_of(acked.begin(), acked.end(), [](bool a) { return a; })) {
    return report;
  }
  return absl::UnavailableError(absl::StrCat(
      "batches still unacknowledged after ", options.max_streams,
      " streams; last error: ", last_error.empty() ? "none" : last_error));
}

}  // namespace meridian
