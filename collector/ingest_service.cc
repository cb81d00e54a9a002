#include "collector/ingest_service.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "spdlog/spdlog.h"
#include "wire/batch_shape.h"
#include "wire/batch_validator.h"

namespace meridian {
namespace {

// One batch awaiting its ack.
struct Pending {
  v1::Ack ack;
  bool ready = false;
  absl::Status error;  // set if the batch's commit failed
};

// Shared with the writer's callbacks, which may run after Stream() returned.
struct StreamState {
  absl::Mutex mu;
  std::deque<std::shared_ptr<Pending>> pending ABSL_GUARDED_BY(mu);
  bool reading_done ABSL_GUARDED_BY(mu) = false;
  absl::Status failure ABSL_GUARDED_BY(mu);
  int64_t batches_read ABSL_GUARDED_BY(mu) = 0;

  bool AckReady() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return (!pending.empty() && pending.front()->ready) ||
           (reading_done && pending.empty());
  }
};

grpc::Status Exhausted(grpc::ServerContext* context, int retry_after_ms,
                       const std::string& why) {
  context->AddTrailingMetadata("retry-after-ms",
                               std::to_string(retry_after_ms));
  return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                      why + "; retry in " + std::to_string(retry_after_ms) +
                          " ms (unacknowledged batches are resent)");
}

// Writes the stream's acks in arrival order as they become ready; cancels
// the stream if it sends nothing for idle_timeout while nothing awaits an
// ack, or once a batch's commit failed (the failure kept in `state`).
void WriteAcks(
    std::shared_ptr<StreamState> state,
    grpc::ServerReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>* stream,
    grpc::ServerContext* context, absl::Duration idle_timeout,
    IngestCounters* counters) {
  bool client_gone = false;
  while (true) {
    std::shared_ptr<Pending> next;
    {
      absl::MutexLock lock(&state->mu);
      const int64_t read_before = state->batches_read;
      if (!state->mu.AwaitWithTimeout(
              absl::Condition(state.get(), &StreamState::AckReady),
              idle_timeout)) {
        if (state->batches_read == read_before && state->pending.empty()) {
          counters->streams_idle++;
          context->TryCancel();  // the reader's Read returns false
          state->mu.Await(absl::Condition(state.get(), &StreamState::AckReady));
        }
        if (!state->AckReady()) continue;
      }
      if (state->pending.empty()) return;
      next = state->pending.front();
      state->pending.pop_front();
      if (!next->error.ok()) {
        state->failure = next->error;
        context->TryCancel();  // unblocks the reader
        return;
      }
    }
    const std::string bytes = next->ack.SerializeAsString();
    grpc::Slice slice(bytes);
    grpc::ByteBuffer message(&slice, 1);
    if (!client_gone && !stream->Write(message)) client_gone = true;
  }
}

// Parses a batch read from a stream into `batch`: its shape is checked
// before it is parsed (parsing costs memory per element). Why it was
// refused unparsed, or empty.
std::string ParseBatch(const grpc::ByteBuffer& raw, v1::Batch* batch) {
  grpc::Slice slice;
  if (!raw.DumpToSingleSlice(&slice).ok()) return "the batch could not be read";
  const absl::string_view bytes(reinterpret_cast<const char*>(slice.begin()),
                                slice.size());
  absl::StatusOr<BatchShape> shape = ScanBatchShape(bytes);
  std::string refused = shape.ok() ? BatchShapeProblem(*shape)
                                   : std::string(shape.status().message());
  if (refused.empty() &&
      !batch->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    refused = "the batch does not parse as a meridian.v1.Batch";
  }
  return refused;
}

// Puts `pending` in the stream's queue of acks to come, once it has room:
// a client that does not read its acks holds at most `limit` batches here,
// and the stream is not read further until one is answered. False, with
// nothing queued, once a batch's commit has failed.
bool Enqueue(StreamState& state, std::shared_ptr<Pending> pending,
             size_t limit) {
  absl::MutexLock lock(&state.mu);
  ++state.batches_read;
  auto room = [&state, limit]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state.mu) {
    return state.pending.size() < limit || !state.failure.ok();
  };
  state.mu.Await(absl::Condition(&room));
  if (!state.failure.ok()) return false;
  state.pending.push_back(std::move(pending));
  return true;
}

// Makes `pending`'s ack ready from the writer's result.
void Answer(StreamState& state, Pending& pending,
            const absl::StatusOr<BatchWriteResult>& result) {
  absl::MutexLock lock(&state.mu);
  if (result.ok()) {
    pending.ack.set_result(result->duplicate ? v1::Ack::RESULT_DUPLICATE
                                             : v1::Ack::RESULT_STORED);
    pending.ack.set_spans_stored(result->spans_stored);
  } else {
    pending.error = result.status();
  }
  pending.ready = true;
}

}  // namespace

absl::Status IngestService::Admit(const grpc::ServerContext& context,
                                  const std::string& peer,
                                  const std::string& refused, v1::Batch* batch,
                                  std::vector<SpanColumns>* decoded,
                                  BatchRepairs* repairs) {
  if (!refused.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a batch from ", peer, " was refused unparsed: ", refused));
  }
  absl::Status valid = ValidateBatch(batch, decoded, repairs);
  if (!valid.ok()) return valid;
  grpc::Status may = auth_->CheckAgent(context, batch->agent_id());
  if (!may.ok()) return absl::PermissionDeniedError(may.error_message());
  for (int i = 0; i < batch->processes_size(); ++i) {
    const std::string& job = batch->strings(batch->processes(i).job());
    may = auth_->Check(context, Scope::kWrite, job);
    if (!may.ok()) return absl::PermissionDeniedError(may.error_message());
  }
  return absl::OkStatus();
}

void IngestService::CountRepairs(const BatchRepairs& repairs,
                                 const v1::Batch& batch,
                                 const std::string& peer, v1::Ack* ack) {
  counters_.spans_invalid += repairs.spans_dropped;
  spdlog::warn("batch {} from {} ({}): dropped {} invalid spans, first {}",
               batch.batch_seq(), peer, batch.agent_id(), repairs.spans_dropped,
               repairs.first_problem);
  ack->set_spans_invalid(repairs.spans_dropped);
  ack->set_error(repairs.first_problem);
}

void IngestService::Written(const BatchJobs& jobs,
                            const absl::StatusOr<BatchWriteResult>& result) {
  if (!result.ok()) {
    spdlog::error("storing a batch failed: {}",
                  std::string(result.status().message()));
  } else if (result->duplicate) {
    counters_.batches_duplicate++;
  } else {
    counters_.batches_stored++;
    counters_.spans_stored += result->spans_stored;
    Stored(jobs);
  }
}

IngestService::BatchJobs IngestService::JobsOf(
    const v1::Batch& batch, const std::vector<SpanColumns>& decoded) {
  BatchJobs jobs;
  auto job_of_track = [&](uint32_t track) -> const std::string& {
    return batch.strings(batch.processes(batch.tracks(track).process()).job());
  };
  for (const v1::Span& span : batch.spans()) {
    ++jobs.spans[job_of_track(span.track())];
  }
  for (int i = 0; i < batch.chunks_size(); ++i) {
    jobs.spans[job_of_track(batch.chunks(i).track())] += decoded[i].size();
  }
  jobs.processes = JobEnds::ProcessesOf(batch);
  return jobs;
}

void IngestService::Stored(const BatchJobs& jobs) {
  absl::MutexLock lock(&jobs_mu_);
  for (const auto& [job, spans] : jobs.spans) {
    const bool named =
        spans_by_job_.count(job) > 0 || spans_by_job_.size() < kMaxJobsCounted;
    spans_by_job_[named ? job : "(other)"] += spans;
  }
  // Every job it declared a process of changed (its last write moved, if
  // nothing else: a refresh must follow), then those it ended (the end is
  // the later news).
  const std::vector<std::string> ended = job_ends_.Saw(jobs.processes);
  if (on_stored_) {
    std::vector<const std::string*> changed;
    for (const DeclaredProcess& p : jobs.processes) {
      if (std::none_of(changed.begin(), changed.end(),
                       [&](const std::string* job) { return *job == p.job; })) {
        changed.push_back(&p.job);
      }
    }
    for (const std::string* job : changed) on_stored_(*job, false);
    for (const std::string& job : ended) on_stored_(job, true);
  }
}

std::vector<std::pair<std::string, double>> IngestService::SpansByJob() const {
  absl::MutexLock lock(&jobs_mu_);
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [job, spans] : spans_by_job_) {
    out.emplace_back(job, static_cast<double>(spans));
  }
  return out;
}

IngestService::IngestService(BatchWriter* writer,
                             std::shared_ptr<const Authorizer> auth,
                             IngestLimits limits)
    : writer_(writer), auth_(std::move(auth)), limits_(limits) {
  // Method 0, Stream, read and written as raw bytes.
  MarkMethodStreamed(
      0,
      new grpc::internal::BidiStreamingHandler<IngestService, grpc::ByteBuffer,
                                               grpc::ByteBuffer>(
          [](IngestService* service, grpc::ServerContext* context,
             grpc::ServerReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>*
                 stream) { return service->RawStream(context, stream); },
          this));
}

grpc::Status IngestService::RawStream(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>* stream) {
  if (grpc::Status may = auth_->CheckAny(*context, Scope::kWrite); !may.ok()) {
    return may;
  }
  // The token's identity ("" without tokens): one per stream.
  const std::string identity = auth_->Identity(*context);
  if (streams_.fetch_add(1) >= limits_.max_streams) {
    streams_.fetch_sub(1);
    counters_.streams_refused++;
    return Exhausted(context, limits_.retry_after_ms,
                     "the collector serves at most " +
                         std::to_string(limits_.max_streams) +
                         " ingest streams at once");
  }
  struct Leave {
    std::atomic<int>* streams;
    ~Leave() { streams->fetch_sub(1); }
  } leave{&streams_};
  auto state = std::make_shared<StreamState>();
  const std::string peer = context->peer();
  const absl::Duration idle_timeout = limits_.idle_timeout;
  IngestCounters* counters = &counters_;

  // Writes acks in arrival order as they become ready.
  std::thread acker(WriteAcks, state, stream, context, idle_timeout, counters);

  bool overloaded = false;
  while (true) {
    auto batch = std::make_shared<v1::Batch>();
    grpc::ByteBuffer raw;
    if (!stream->Read(&raw)) break;
    const std::string refused = ParseBatch(raw, batch.get());
    raw.Clear();
    auto pending = std::make_shared<Pending>();
    pending->ack.set_agent_id(batch->agent_id());
    pending->ack.set_batch_seq(batch->batch_seq());
    if (!Enqueue(*state, pending, limits_.max_in_flight)) break;
    std::vector<SpanColumns> decoded;
    BatchRepairs repairs;
    const absl::Status valid =
        Admit(*context, peer, refused, batch.get(), &decoded, &repairs);
    if (!valid.ok()) {
      counters_.batches_rejected++;
      spdlog::warn("rejected a batch from {}: {}", peer,
                   std::string(valid.message()));
      absl::MutexLock lock(&state->mu);
      pending->ack.set_result(v1::Ack::RESULT_REJECTED);
      pending->ack.set_error(std::string(valid.message()));
      pending->ready = true;
      continue;
    }
    // With tokens, what a batch's agent id keys (its exactly-once record,
    // its clock models, the job's agents) is kept under the token that
    // sent it too: no client can pose as an agent it does not hold the
    // token of (its batches would otherwise be taken as duplicates).
    if (!identity.empty()) {
      batch->set_agent_id(absl::StrCat(identity, "/", batch->agent_id()));
    }
    if (repairs.spans_dropped > 0) {
      CountRepairs(repairs, *batch, peer, &pending->ack);
    }
    BatchJobs jobs = JobsOf(*batch, decoded);
    absl::Status queued = writer_->Submit(
        batch,
        [this, state, pending,
         jobs = std::move(jobs)](absl::StatusOr<BatchWriteResult> result) {
          Written(jobs, result);
          Answer(*state, *pending, result);
        },
        std::move(decoded));
    if (!queued.ok()) {
      // No room: this batch gets no ack; the stream ends once the batches
      // before it are answered, and the agent resends it later.
      counters_.batches_deferred++;
      absl::MutexLock lock(&state->mu);
      state->pending.pop_back();
      overloaded = true;
      break;
    }
  }
  {
    absl::MutexLock lock(&state->mu);
    state->reading_done = true;
  }
  acker.join();
  if (overloaded) {
    return Exhausted(context, limits_.retry_after_ms,
                     "the collector's write queue is full");
  }
  absl::MutexLock lock(&state->mu);
  if (!state->failure.ok()) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        "the collector could not store a batch (" +
                            std::string(state->failure.message()) +
                            "); resend the unacknowledged batches");
  }
  return grpc::Status::OK;
}

}  // namespace meridian
