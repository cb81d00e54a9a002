#include "cli/command_tree.h"

#include <functional>
#include <string>
#include <vector>

#include "common/version.h"

namespace meridian {
namespace {

CLI::App* Command(CLI::App& tree, const char* name, const char* summary,
                  const char* details = "") {
  CLI::App* command = tree.add_subcommand(name, summary);
  // --collector and --request-timeout (the tree's) may also come after the
  // command's name.
  command->fallthrough();
  command->footer(details);
  return command;
}

// CLI11 binds an option to a variable given where the help goes unless
// the help is a const string: hence the copies.
CLI::Option* Value(CLI::App* command, const char* names, const char* value,
                   const char* help) {
  const std::string description = help;
  return command->add_option(names, description)->type_name(value);
}

CLI::Option* Switch(CLI::App* command, const char* names, const char* help) {
  const std::string description = help;
  // `--json=false` would read as --json: refused instead.
  return command->add_flag(names, description)->disable_flag_override();
}

// The arguments after the flags: all the words that are left.
CLI::Option* Positionals(CLI::App* command, const char* name, const char* shown,
                         const char* help) {
  const std::string description = help;
  return command->add_option(name, description)
      ->type_name(shown)
      ->expected(1, CLI::detail::expected_max_vector_size)
      ->allow_extra_args()
      ->required();
}

// --job of a command that reads a stored job.
void StoredJob(CLI::App* command) {
  Value(command, "--job", "J", "the job (`meridian jobs` lists them)")
      ->required();
}

void Json(CLI::App* command) {
  Switch(command, "--json", "print the result as one JSON object");
}

// The span filters of export and stats (cli/filter_flags.h).
void Filters(CLI::App* command) {
  Value(command, "--ranks", "R", "only these ranks and ranges: 0,2-5");
  Value(command, "--category", "C",
        "only these categories (C1,C2,...): mpi, nccl, cuda_kernel, "
        "cuda_memcpy, cuda_memset, cuda_sync, cuda_runtime, nvtx, user, c10d");
  Value(command, "--name", "GLOB",
        "only spans whose name matches the shell glob (MPI_*)");
  Value(command, "--from", "T",
        "only spans ending at or after T on the exported trace's timeline "
        "(since its origin, corrected clocks): 1.5s, 250ms, 10us, 100ns "
        "(bare numbers are seconds)");
  Value(command, "--to", "T", "only spans starting before T (as --from)");
  Value(command, "--steps", "A:B",
        "only spans of steps A to B; A:, :B and N also work");
}

void AddRun(CLI::App& tree) {
  CLI::App* run = Command(
      tree, "run", "run a command traced (around or inside mpirun)",
      "Runs CMD with the probe loaded and the node's agent (started if none "
      "answers), then waits for delivery and says whether every span was "
      "acknowledged or spooled. Works as `meridian run -- mpirun ...` and as "
      "`mpirun ... meridian run -- ./app`; everything after -- is the command, "
      "untouched. Exit status: CMD's (128 + signal if it was killed); 125 if "
      "meridian run itself failed (usage, no agent, a --job already held), "
      "126 if CMD cannot be executed, 127 if it is not found.");
  Value(run, "--job", "J",
        "the job id (default: the launcher's job id, else one made from "
        "CMD's name and the time); printed at start");
  Switch(run, "--append",
         "add to a job the collector already holds (else such a --job is "
         "refused)");
  Switch(run, "--on-demand",
         "record nothing until `meridian trace` asks (MERIDIAN_TRACE)");
  Value(run, "--flush-timeout", "S",
        "seconds to wait for delivery after CMD ends (default 60)");
  Switch(run, "--json",
         "print the summary at the end as one JSON object on stdout");
  Positionals(run, "command", "-- CMD...",
              "the command and its arguments, passed untouched");
}

void AddImport(CLI::App& tree) {
  CLI::App* import = Command(
      tree, "import", "import other tools' trace files into a job",
      "Chrome JSON, PyTorch profiler (Kineto), Meridian exports, Horovod, "
      "BytePS and Bluefog timelines, mpitrace profiles, Nsight Systems "
      "SQLite; files, directories, .gz. Each file is all in or all out; "
      "importing it again stores nothing twice. See docs/import-export.md.");
  Value(import, "--job", "J", "the job to import into")->required();
  Value(import, "--format",
        "chrome|kineto|meridian|horovod|byteps|bluefog|mpitrace|nsight",
        "the files' format (default: told by their content)");
  Value(import, "--rank", "N",
        "the rank of the first file's process (the next file's gets N + 1)");
  Value(import, "--node", "NAME", "the node the files' spans ran on");
  Value(import, "--clock-offset-ns", "X",
        "the node's clock minus the collector's, in ns");
  Value(import, "--epoch-ns", "T",
        "the Unix time in ns of timestamp 0 of a relative trace");
  Positionals(import, "paths", "PATH...", "trace files or directories");
}

void AddTrace(CLI::App& tree) {
  CLI::App* trace = Command(
      tree, "trace", "make a running job record the next steps or seconds",
      "Makes the job's processes (started with --on-demand, or outside their "
      "MERIDIAN_START_STEP window) on every node record the next N steps or "
      "S seconds, through the collector and each node's agent. Exit 1 if no "
      "process of the job was reached.");
  Value(trace, "--job", "J", "the running job")->required();
  Value(trace, "--steps", "N", "record the next N steps");
  Value(trace, "--seconds", "S", "record for S seconds (instead of --steps)");
  Value(trace, "--timeout", "S",
        "seconds to wait for the agents' answers (1 to 600, default 10)");
  Switch(trace, "--local",
         "ask only this node's agent ($MERIDIAN_AGENT_SOCKET), not the "
         "collector");
  Json(trace);
}

void AddJobs(CLI::App& tree) {
  CLI::App* jobs = Command(
      tree, "jobs", "list the jobs stored",
      "One line per job: its id, ranks seen (of the world size its launcher "
      "started, where known), nodes, spans, start (UTC) and duration; jobs "
      "with ranks missing are flagged incomplete.");
  Json(jobs);
}

void AddDelete(CLI::App& tree) {
  CLI::App* del = Command(
      tree, "delete", "delete a job from the store",
      "Deletes the job's spans, processes and tracks; prints how many spans "
      "it held.");
  StoredJob(del);
}

void AddExport(CLI::App& tree) {
  CLI::App* exp = Command(
      tree, "export", "write a job's merged trace for a viewer",
      "Chrome JSON (chrome://tracing, Perfetto UI; the default), Perfetto "
      "protobuf (FILE.pftrace), PyTorch profiler JSON per rank (HTA, "
      "TensorBoard); .gz compresses. Every node is shown on the collector's "
      "clock (docs/clocks.md). See docs/import-export.md.");
  StoredJob(exp);
  Value(exp, "-o,--output", "FILE", "the file to write (FILE.gz: gzipped)");
  Value(exp, "--format", "chrome|perfetto|kineto",
        "the format (default: from FILE's name, else chrome)");
  Value(exp, "--per-rank", "DIR", "one file per rank in DIR");
  // Two words: `--split-by step 10` (`step:10` also works).
  Value(exp, "--split-by", "step|rank N",
        "files of N steps or N ranks each (FILE.steps-A-B.json)")
      ->expected(1, 2);
  Switch(exp, "--raw-clock",
         "the nodes' raw timestamps instead of the collector's clock");
  Switch(exp, "--critical-path",
         "add a critical path track: of step N with --steps N, else of the "
         "job");
  Filters(exp);
}

void AddStats(CLI::App& tree) {
  CLI::App* stats =
      Command(tree, "stats", "mpitrace-style communication statistics",
              "Per operation: calls, bytes, time and the message sizes (with "
              "--by-callsite, also per call site); per rank: communication and "
              "elapsed time.");
  StoredJob(stats);
  Json(stats);
  Switch(stats, "--matrix",
         "print only the communication matrix: messages and bytes from each "
         "rank to each other (MPI and c10d point-to-point, MPI one-sided)");
  Switch(stats, "--expand-collectives",
         "with --matrix: add each MPI collective as its data movement "
         "between its members");
  Switch(stats, "--csv", "with --matrix: print it as CSV");
  Switch(stats, "--by-callsite",
         "also each operation per call site, where the program made the "
         "calls (jobs run with MERIDIAN_CALLSITES=1)");
  Value(stats, "--mpitrace", "DIR",
        "also write each rank's profile as mpitrace does, DIR/mpi_profile.RANK "
        "(DIR created if missing; existing files are never replaced)");
  Filters(stats);
}

void AddAnalyses(CLI::App& tree) {
  CLI::App* clocks = Command(
      tree, "clocks", "each node's clock offset, drift and correction",
      "Per node: offset, drift, uncertainty and the causal correction; then "
      "the causal constraints violated before and after refinement, and "
      "when the solution was computed (it is stored with the job).");
  StoredJob(clocks);
  Switch(clocks, "--resolve",
         "solve the job's clocks again from its spans, not from the stored "
         "solution (and store the new one)");
  Json(clocks);

  CLI::App* path = Command(
      tree, "critical-path", "what bounds the step (or job) time",
      "The longest path across ranks through step N (or the whole job), "
      "with its breakdown: compute, communication, waiting, untraced. See "
      "docs/analysis.md.");
  StoredJob(path);
  Value(path, "--step", "N", "the step (default: the whole job)");
  Json(path);

  CLI::App* stragglers = Command(
      tree, "stragglers", "the ranks the others waited for most",
      "The ranks others waited for most, then the most skewed collective "
      "instances.");
  StoredJob(stragglers);
  Value(stragglers, "--head", "N",
        "how many collective instances to list (default 20, 0: all)");
  Json(stragglers);

  CLI::App* waits = Command(
      tree, "waits", "where ranks waited, by pattern, and what caused it",
      "Wait states by Scalasca's patterns (late_sender, late_receiver, "
      "wait_at_nxn, wait_at_barrier, late_broadcast, early_reduce): per "
      "pattern and rank over the whole job, or per step of --step N or "
      "--steps A:B; each with the ranks whose activity caused it, through "
      "chains of waits, and per rank the waiting it caused (short- and "
      "long-term delay costs). See docs/analysis.md.");
  StoredJob(waits);
  Value(waits, "--step", "N", "step N alone");
  Value(waits, "--steps", "A:B", "per step of A to B");
  Value(waits, "--ranks", "R", "only these ranks' waits: 0,2-5");
  Json(waits);

  CLI::App* health = Command(
      tree, "health", "whether a running job is stalled, on what and whom",
      "While a job runs: what each rank is in now, as its agent sampled it "
      "about a second ago. Stalled: no rank has left a traced call for the "
      "threshold, and some rank waits in one; then the stalls, each with "
      "the ranks waiting and those they wait for (missing from a "
      "collective, in another one, or a point-to-point peer with no "
      "matching call). A job no process of which runs any more: finished. "
      "See docs/health.md.");
  StoredJob(health);
  Value(health, "--stall-after", "S",
        "seconds without progress that count as stalled (default 60)");
  Switch(health, "--watch",
         "ask again every second until the job finishes (--json: one "
         "object a line)");
  Json(health);

  CLI::App* steps = Command(
      tree, "steps", "iteration time per step and rank",
      "Per step and rank: iteration time; compute, communication and their "
      "overlap.");
  StoredJob(steps);
  Value(steps, "--rank", "R",
        "per rank, only rank R's figures (the means stay every rank's)");
  Json(steps);

  CLI::App* compare = Command(
      tree, "compare", "two jobs or two ranks, operation by operation",
      "Per operation: count, time and bytes in A and B and the difference "
      "B - A. Give --job A --job B, or --job A --ranks R1,R2.");
  StoredJob(compare);
  // Given twice: both jobs, in order.
  compare->get_option("--job")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->description(
          "a job (`meridian jobs` lists them); twice: the two jobs to "
          "compare");
  Value(compare, "--ranks", "R1,R2", "compare these two ranks of one job");
  Value(compare, "--sort", "time|count|bytes|name",
        "order by the difference of this (default time)");
  Value(compare, "--head", "N", "list the first N operations (default all)");
  Json(compare);

  CLI::App* graph =
      Command(tree, "graph", "write a step's dependency graph",
              "Step N's dependency graph as DOT or GraphML (from FILE's name: "
              ".graphml or .xml, else DOT). See docs/analysis.md.");
  StoredJob(graph);
  Value(graph, "--step", "N", "the step")->required();
  Value(graph, "-o,--output", "FILE", "the file to write")->required();
  Value(graph, "--format", "dot|graphml", "the format (default: from FILE)");
}

void AddSql(CLI::App& tree) {
  CLI::App* sql = Command(
      tree, "sql", "one read-only SQL query over the stored spans",
      "The tables of docs/sql.md (spans, steps, jobs, processes, tracks, "
      "counters) over the jobs you may read, on the collector's SQLite store. "
      "One SELECT; anything that writes, ATTACH, PRAGMA and load_extension are "
      "refused; the collector stops a query past 30 s or 512 MiB.");
  Value(sql, "--job", "J",
        "only this job is visible (default: every job you may read)");
  Value(sql, "--max-rows", "N",
        "at most N rows (default 10000, at most 1000000); more is an error");
  Switch(sql, "--csv", "print the rows as CSV, with a header line");
  Json(sql);
  Positionals(sql, "query", "QUERY", "the SQL statement (quote it)");
}

void AddReplay(CLI::App& tree) {
  CLI::App* replay = Command(
      tree, "replay", "predict the effect of a change before making it",
      "Replays the job's dependency graph with changed durations and "
      "predicts its step times against the measured ones, per step and rank, "
      "with the predicted critical path. Changes combine. See "
      "docs/analysis.md, \"Replay\".");
  StoredJob(replay);
  Value(replay, "--step", "N", "replay step N alone");
  Value(replay, "--steps", "A:B", "report steps A to B (default: all)");
  Value(replay, "--scale", "NAME_GLOB=F",
        "spans of operations matching the glob, or of a category (mpi, nccl, "
        "cuda_kernel...), take F times their time; 0 removes them; "
        "repeatable")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  Value(replay, "--rank-like", "R=S",
        "rank R's compute takes what rank S's took; repeatable")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  Value(replay, "--comm-model", "ring|tree",
        "collectives and messages take what an alpha-beta model gives");
  Value(replay, "--bandwidth", "B",
        "the model's bandwidth: 12.5GB/s, 100Gbit/s, 800MiB/s");
  Value(replay, "--latency", "L", "the model's latency: 5us (default 0)");
  Switch(replay, "--no-wait",
         "waiting vanishes: late arrivals, CPU waiting for the GPU");
  Value(replay, "--trace", "FILE",
        "also write the measured and predicted timelines as one Chrome trace");
  Json(replay);
}

void AddHelpers(CLI::App& tree) {
  CLI::App* help = Command(tree, "help", "help on a command");
  Value(help, "command", "COMMAND", "the command");

  // What deploy/install.sh installs: listed, so that a user who installed
  // by hand finds them.
  CLI::App* completion =
      Command(tree, "completion", "print the bash completion script",
              "Install it as PREFIX/share/bash-completion/completions/"
              "meridian, or source it: source <(meridian completion bash).");
  Value(completion, "shell", "bash", "the shell (bash)")->required();
  CLI::App* man = Command(tree, "man", "print or write the man pages",
                          "meridian man prints meridian(1), meridian man "
                          "COMMAND meridian-COMMAND(1).");
  Value(man, "--dir", "DIR", "write every page into DIR");
  Value(man, "command", "COMMAND", "the command whose page to print");
}

std::vector<const CLI::App*> AllCommands(const CLI::App& tree) {
  return tree.get_subcommands(std::function<bool(const CLI::App*)>());
}

}  // namespace

std::unique_ptr<CLI::App> MeridianCommandTree() {
  auto tree = std::make_unique<CLI::App>(
      "the command-line client of a Meridian collector", "meridian");
  tree->footer(
      "Captures distributed training jobs (run, trace) and queries, analyses "
      "and exports what the collector stores. Exit status: 0 success, 1 the "
      "request failed (the message says why), 2 bad usage; meridian run "
      "exits with its command's status, or 125 to 127 (see meridian run "
      "--help). Details: docs/cli.md.");
  // Both set before any flag or command is added: each copies them. A flag
  // given twice: the last one counts (compare's --job keeps both).
  tree->option_defaults()->multi_option_policy(
      CLI::MultiOptionPolicy::TakeLast);
  tree->set_help_flag("-h,--help", "print this help and exit");
  Value(tree.get(), "--collector", "HOST:PORT", "the collector's address")
      ->envname("MERIDIAN_COLLECTOR")
      ->default_str(kDefaultCollector);
  Value(tree.get(), "--request-timeout", "S",
        "seconds to wait for the collector's answer, or for each part of a "
        "streamed one, before giving up")
      ->default_str(std::to_string(kDefaultRequestTimeoutS));
  tree->set_version_flag("--version", std::string("meridian ") + kVersion,
                         "print meridian's version and exit");
  // One command; a later word that names one is an argument (a file to
  // import called "jobs", a command to run).
  tree->require_subcommand(1);
  AddRun(*tree);
  AddImport(*tree);
  AddTrace(*tree);
  AddJobs(*tree);
  AddDelete(*tree);
  AddExport(*tree);
  AddStats(*tree);
  AddAnalyses(*tree);
  AddReplay(*tree);
  AddSql(*tree);
  AddHelpers(*tree);
  return tree;
}

const CLI::App* FindCommand(const CLI::App& tree, const std::string& name) {
  if (name.empty()) return &tree;
  for (const CLI::App* command : AllCommands(tree)) {
    if (command->get_name() == name) return command;
  }
  return nullptr;
}

bool TakesValue(const CLI::Option& option) {
  return option.get_expected_max() > 0;
}

std::string FlagSynopsis(const CLI::Option& option) {
  std::string name = option.get_snames().empty()
                         ? "--" + option.get_lnames().front()
                         : "-" + option.get_snames().front();
  if (TakesValue(option)) name += " " + option.get_type_name();
  return name;
}

std::string OptionNames(const CLI::Option& option) {
  if (option.get_positional()) return option.get_type_name();
  std::string names;
  for (const std::string& name : option.get_snames()) {
    names += (names.empty() ? "-" : ", -") + name;
  }
  for (const std::string& name : option.get_lnames()) {
    names += (names.empty() ? "--" : ", --") + name;
  }
  if (TakesValue(option)) names += " " + option.get_type_name();
  return names;
}

std::string OptionHelp(const CLI::Option& option) {
  std::string help = option.get_description();
  const std::string fallback = option.get_default_str();
  if (!option.get_envname().empty()) {
    help += " (default $" + option.get_envname() +
            (fallback.empty() ? ")" : ", else " + fallback + ")");
  } else if (!fallback.empty()) {
    help += " (default " + fallback + ")";
  }
  return help;
}

std::vector<const CLI::App*> VisibleCommands(const CLI::App& tree) {
  std::vector<const CLI::App*> visible;
  for (const CLI::App* command : AllCommands(tree)) {
    if (!command->get_group().empty()) visible.push_back(command);
  }
  return visible;
}

std::vector<const CLI::Option*> CommandFlags(const CLI::App& command) {
  std::vector<const CLI::Option*> flags;
  for (const CLI::Option* option : command.get_options()) {
    if (option->nonpositional() && option != command.get_help_ptr()) {
      flags.push_back(option);
    }
  }
  if (command.get_help_ptr() != nullptr) {
    flags.push_back(command.get_help_ptr());
  }
  return flags;
}

std::vector<const CLI::Option*> CommandPositionals(const CLI::App& command) {
  std::vector<const CLI::Option*> positionals;
  for (const CLI::Option* option : command.get_options()) {
    if (option->get_positional()) positionals.push_back(option);
  }
  return positionals;
}

std::string CommandSynopsis(const CLI::App& command) {
  if (command.get_parent() == nullptr) {
    // The tree's value flags (--collector, --request-timeout), then any
    // command.
    std::string synopsis = command.get_name();
    for (const CLI::Option* flag : CommandFlags(command)) {
      if (TakesValue(*flag)) {
        synopsis += " [" + FlagSynopsis(*flag) + "]";
      }
    }
    return synopsis + " COMMAND [flags]";
  }
  std::string synopsis =
      command.get_parent()->get_name() + " " + command.get_name();
  bool optional = false;
  for (const CLI::Option* flag : CommandFlags(command)) {
    if (flag->get_required()) {
      synopsis += " " + FlagSynopsis(*flag);
    } else {
      optional = true;
    }
  }
  if (optional) synopsis += " [flags]";
  for (const CLI::Option* positional : CommandPositionals(command)) {
    synopsis += positional->get_required()
                    ? " " + positional->get_type_name()
                    : " [" + positional->get_type_name() + "]";
  }
  return synopsis;
}

}  // namespace meridian
