#include "query/export/graph_writer.h"

#include <set>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "query/ops/category.h"

namespace meridian {
namespace {

struct Node {
  std::string id;
  int32_t rank;
  std::string category;
  std::string name;
  int64_t start_ns;  // since the step's start
  int64_t dur_ns;
};

struct Edge {
  std::string from, to;
  const char* type;
  bool binding;
};

std::string Escaped(absl::string_view s, bool xml) {
  std::string out;
  for (char c : s) {
    if (xml) {
      switch (c) {
        case '&':
          out += "&amp;";
          continue;
        case '<':
          out += "&lt;";
          continue;
        case '>':
          out += "&gt;";
          continue;
        case '"':
          out += "&quot;";
          continue;
        default:
          break;
      }
    } else if (c == '"' || c == '\\') {
      out += '\\';
    }
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    out += c;
  }
  return out;
}

std::string Dot(const std::vector<Node>& nodes, const std::vector<Edge>& edges,
                int64_t step) {
  std::string out =
      absl::StrCat("digraph \"step ", step, "\" {\n  rankdir=LR;\n");
  for (const Node& n : nodes) {
    absl::StrAppendFormat(
        &out,
        "  %s [label=\"%s\\n%s\\n%.3f ms\", rank=%d, category=\"%s\", "
        "start_ns=%d, dur_ns=%d];\n",
        n.id, n.rank >= 0 ? absl::StrCat("rank ", n.rank) : "collective",
        Escaped(n.name, false), n.dur_ns / 1e6, n.rank, n.category, n.start_ns,
        n.dur_ns);
  }
  for (const Edge& e : edges) {
    absl::StrAppendFormat(&out, "  %s -> %s [type=\"%s\"%s];\n", e.from, e.to,
                          e.type,
                          e.binding ? ", binding=true, penwidth=3" : "");
  }
  out += "}\n";
  return out;
}

std::string GraphMl(const std::vector<Node>& nodes,
                    const std::vector<Edge>& edges, int64_t step) {
  std::string out =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"
      "  <key id=\"rank\" for=\"node\" attr.name=\"rank\" attr.type=\"int\"/>\n"
      "  <key id=\"category\" for=\"node\" attr.name=\"category\" "
      "attr.type=\"string\"/>\n"
      "  <key id=\"name\" for=\"node\" attr.name=\"name\" "
      "attr.type=\"string\"/>\n"
      "  <key id=\"start_ns\" for=\"node\" attr.name=\"start_ns\" "
      "attr.type=\"long\"/>\n"
      "  <key id=\"dur_ns\" for=\"node\" attr.name=\"dur_ns\" "
      "attr.type=\"long\"/>\n"
      "  <key id=\"type\" for=\"edge\" attr.name=\"type\" "
      "attr.type=\"string\"/>\n"
      "  <key id=\"binding\" for=\"edge\" attr.name=\"binding\" "
      "attr.type=\"boolean\"/>\n";
  absl::StrAppend(&out, "  <graph id=\"step ", step,
                  "\" edgedefault=\"directed\">\n");
  for (const Node& n : nodes) {
    absl::StrAppendFormat(
        &out,
        "    <node id=\"%s\"><data key=\"rank\">%d</data><data "
        "key=\"category\">%s</data><data key=\"name\">%s</data><data "
        "key=\"start_ns\">%d</data><data key=\"dur_ns\">%d</data></node>\n",
        n.id, n.rank, n.category, Escaped(n.name, true), n.start_ns, n.dur_ns);
  }
  for (const Edge& e : edges) {
    absl::StrAppendFormat(&out,
                          "    <edge source=\"%s\" target=\"%s\"><data "
                          "key=\"type\">%s</data><data "
                          "key=\"binding\">%s</data></edge>\n",
                          e.from, e.to, e.type, e.binding ? "true" : "false");
  }
  out += "  </graph>\n</graphml>\n";
  return out;
}

}  // namespace

absl::StatusOr<std::string> StepGraph(const DependencyGraph& graph,
                                      int64_t step, v1::GraphFormat format) {
  const JobSpans& spans = graph.spans();
  const std::vector<JobSpan>& all = spans.spans();
  auto in_step = [&all, step](int64_t i) {
    return i >= 0 && all[i].has_step && all[i].step == step;
  };
  auto id = [](int64_t i) { return absl::StrCat("s", i); };
  std::vector<Node> nodes;
  int64_t origin = INT64_MAX;
  for (size_t i = 0; i < all.size(); ++i) {
    if (in_step(i)) origin = std::min(origin, all[i].start);
  }
  if (origin == INT64_MAX) {
    return absl::NotFoundError(
        absl::StrCat("no span of this job is tagged with step ", step,
                     "; `meridian steps` lists the steps"));
  }
  for (size_t i = 0; i < all.size(); ++i) {
    if (!in_step(i)) continue;
    nodes.push_back(
        {id(i), all[i].rank, std::string(CategoryName(all[i].category)),
         spans.name(all[i]), all[i].start - origin, all[i].end - all[i].start});
  }
  std::vector<Edge> edges;
  for (size_t t = 0; t < spans.tracks().size(); ++t) {  // program order
    int32_t previous = -1;
    for (const auto& p : graph.pieces(static_cast<int32_t>(t))) {
      // An enclosing span's pieces after its first child are not new steps
      // of the program: following them would draw child -> parent cycles.
      if (p.span < 0 || p.span == previous || p.t0 != all[p.span].start) {
        continue;
      }
      if (in_step(previous) && in_step(p.span)) {
        edges.push_back({id(previous), id(p.span), "program", false});
      }
      previous = p.span;
    }
  }
  for (size_t i = 0; i < all.size(); ++i) {
    if (!in_step(i)) continue;
    if (in_step(graph.launch(i))) {
      edges.push_back({id(graph.launch(i)), id(i), "launch", false});
    }
    if (all[i].role == SpanRole::kWait) {
      const int32_t bound = graph.end_binding(i);
      for (int32_t a : graph.Completes(i)) {
        if (!in_step(a)) continue;
        const bool binding = bound >= 0 && graph.end_binding(a) == bound;
        edges.push_back({id(a), id(i), "completes", binding});
      }
    }
  }
  for (int64_t k = 0; k < graph.mpi().instances(); ++k) {
    absl::Span<const int32_t> members = graph.mpi().members(k);
    bool any = false;
    for (int32_t m : members) any = any || in_step(m);
    if (!any) continue;
    const std::string instance = absl::StrCat("c", k);
    const JobSpan& first = all[members[0]];
    nodes.push_back({instance, -1, std::string(CategoryName(first.category)),
                     absl::StrCat(spans.name(first), " comm ", first.comm,
                                  " seq ", first.seq),
                     0, 0});
    absl::flat_hash_set<int32_t> binding;
    for (int32_t m : members) binding.insert(graph.end_binding(m));
    for (int32_t m : members) {
      if (!in_step(m)) continue;
      edges.push_back({id(m), instance, "collective", binding.contains(m)});
      edges.push_back({instance, id(m), "collective", false});
    }
  }
  for (const auto& [send, recv] : graph.mpi().messages()) {
    if (!in_step(send) || !in_step(recv)) continue;
    edges.push_back(
        {id(send), id(recv), "message", graph.end_binding(recv) == send});
  }
  for (const auto& [unlock, acquire] : graph.mpi().lock_handoffs()) {
    if (!in_step(unlock) || !in_step(acquire)) continue;
    edges.push_back({id(unlock), id(acquire), "lock",
                     graph.end_binding(acquire) == unlock});
  }
  for (const auto& [complete, wait] : graph.mpi().epoch_completions()) {
    if (!in_step(complete) || !in_step(wait)) continue;
    edges.push_back(
        {id(complete), id(wait), "epoch", graph.end_binding(wait) == complete});
  }
  for (const auto& [post, start] : graph.mpi().epoch_posts()) {
    if (!in_step(post) || !in_step(start)) continue;
    edges.push_back(
        {id(post), id(start), "epoch", graph.end_binding(start) == post});
  }
  return format == v1::GRAPH_FORMAT_GRAPHML ? GraphMl(nodes, edges, step)
                                            : Dot(nodes, edges, step);
}

}  // namespace meridian
