// CountingStore (tests): a Store that passes every call to another and
// counts the reads that cost most (span scans, step summary scans, catalog
// loads), so that a test can assert that a query reads the store once.
//
// Example:
//   CountingStore counting(*f->store);
//   AddRankTotals(counting, f->catalog, 0, 2, &a, &b);
//   EXPECT_EQ(counting.scans(), 1);
#ifndef MERIDIAN_TESTING_COUNTING_STORE_H_
#define MERIDIAN_TESTING_COUNTING_STORE_H_

#include <string>
#include <utility>
#include <vector>

#include "store/store.h"

namespace meridian {

class CountingStore final : public Store {
 public:
  // `inner` must outlive this.
  explicit CountingStore(Store& inner) : inner_(inner) {}

  int scans() const { return scans_; }
  int summary_scans() const { return summary_scans_; }
  int catalog_loads() const { return catalog_loads_; }
  int model_loads() const { return model_loads_; }

  absl::Status Scan(const JobInfo& job, const ScanRange& range,
                    const std::function<bool(const StoredSpan&)>& visit,
                    ScanStats* stats = nullptr) override {
    ++scans_;
    return inner_.Scan(job, range, visit, stats);
  }
  absl::Status ScanStepSummaries(
      int64_t job_id, int64_t first_step,
      const std::function<bool(const StoredStepSummary&)>& visit) override {
    ++summary_scans_;
    return inner_.ScanStepSummaries(job_id, first_step, visit);
  }
  absl::StatusOr<JobCatalog> LoadCatalog(const std::string& job) override {
    ++catalog_loads_;
    return inner_.LoadCatalog(job);
  }

  // The rest, passed on uncounted.
  absl::StatusOr<std::vector<BatchWriteResult>> Write(
      absl::Span<const v1::Batch* const> batches,
      absl::Span<std::vector<SpanColumns>* const> decoded = {}) override {
    return inner_.Write(batches, decoded);
  }
  absl::Status BeginSnapshot() override { return inner_.BeginSnapshot(); }
  absl::StatusOr<std::vector<JobInfo>> ListJobs() override {
    return inner_.ListJobs();
  }
  size_t cached_ids() const override { return inner_.cached_ids(); }
  absl::StatusOr<int64_t> DeleteJob(const std::string& name) override {
    return inner_.DeleteJob(name);
  }
  absl::StatusOr<std::vector<std::string>> DeleteJobsEndedBefore(
      int64_t end_before_ns) override {
    return inner_.DeleteJobsEndedBefore(end_before_ns);
  }
  absl::StatusOr<std::vector<NodeClockModel>> LoadClockModels(
      const std::string& node, int64_t job_id) override {
    ++model_loads_;
    return inner_.LoadClockModels(node, job_id);
  }
  absl::StatusOr<std::optional<std::pair<int64_t, int64_t>>> StepRange(
      int64_t job_id) override {
    return inner_.StepRange(job_id);
  }
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> TrackLastSteps(
      int64_t job_id) override {
    return inner_.TrackLastSteps(job_id);
  }
  absl::StatusOr<int64_t> WriteMark(int64_t job_id) override {
    return inner_.WriteMark(job_id);
  }
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> StepsWrittenAfter(
      int64_t job_id, int64_t mark, int64_t up_to) override {
    return inner_.StepsWrittenAfter(job_id, mark, up_to);
  }
  absl::StatusOr<JobTotals> LoadTotals(int64_t job_id) override {
    return inner_.LoadTotals(job_id);
  }
  absl::StatusOr<int64_t> FileBytes() override { return inner_.FileBytes(); }
  absl::StatusOr<std::optional<StoredJobResult>> LoadClockSolution(
      int64_t job_id) override {
    return inner_.LoadClockSolution(job_id);
  }
  absl::Status SaveClockSolution(int64_t job_id,
                                 const StoredJobResult& solution) override {
    return inner_.SaveClockSolution(job_id, solution);
  }
  absl::Status SaveStepSummaries(int64_t job_id,
                                 const std::vector<StoredStepSummary>& steps,
                                 const StoredJobResult& state) override {
    return inner_.SaveStepSummaries(job_id, steps, state);
  }
  absl::StatusOr<std::optional<StoredJobResult>> LoadSummaryState(
      int64_t job_id) override {
    return inner_.LoadSummaryState(job_id);
  }

 private:
  Store& inner_;
  int scans_ = 0;
  int summary_scans_ = 0;
  int catalog_loads_ = 0;
  int model_loads_ = 0;
};

}  // namespace meridian

#endif  // MERIDIAN_TESTING_COUNTING_STORE_H_
