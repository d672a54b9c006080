// CpuForward's Mixture-of-Experts steps (cpu_forward.h): routing (C7:
// softmax, top-k, weights), the routed rows grouped by expert, the experts'
// matrix units, and the rank-ordered combine.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "engine/model/cpu_forward.h"
#include "engine/numerics/lanes.h"

namespace samebits::model::cpu {
namespace {

// Calls fn(e, rows, first_slot) for each expert e that Route gave rows of
// this call, in expert order: its rows are the slots [first_slot,
// first_slot + rows) of the grouped buffers.
template <typename Fn>
void ForEachRoutedExpert(const Activations& a, int n_experts, const Fn& fn) {
  for (int e = 0; e < n_experts; ++e) {
    const int rows = a.offset[e + 1] - a.offset[e];
    if (rows > 0) fn(e, rows, static_cast<size_t>(a.offset[e]));
  }
}

}  // namespace

void CpuForward::Route(int n, const float* fn) {
  ProfileScope scope(profiler_.get(), kind_, ProfileOp::kRouter);
  cpu::Activations& a = a_;
  const int E = c_.n_experts, K = c_.top_k;
  for (int t = 0; t < n; ++t) {
    float* p = a.probs.data() + static_cast<size_t>(t) * E;
    cpu::SoftmaxInPlace(p, E, math_);
    int* chosen = a.chosen.data() + static_cast<size_t>(t) * K;
    float* weight = a.weight.data() + static_cast<size_t>(t) * K;
    cpu::TopK(p, E, K, chosen);
    for (int r = 0; r < K; ++r) weight[r] = p[chosen[r]];
    if (c_.renormalize_top_k) {
      const float z = numerics::Sum(weight, static_cast<size_t>(K));
      for (int r = 0; r < K; ++r) weight[r] = weight[r] / z;
    }
  }
  std::fill(a.count.begin(), a.count.begin() + E, 0);
  for (int i = 0; i < n * K; ++i) a.count[a.chosen[i]] += 1;
  a.offset[0] = 0;
  for (int e = 0; e < E; ++e) a.offset[e + 1] = a.offset[e] + a.count[e];
  std::fill(a.count.begin(), a.count.begin() + E, 0);
  for (int t = 0; t < n; ++t) {
    for (int r = 0; r < K; ++r) {
      const int e = a.chosen[t * K + r];
      const int s = a.offset[e] + a.count[e]++;
      a.slot[t * K + r] = s;
      if (n > 1) {
        std::memcpy(a.xe.data() + static_cast<size_t>(s) * d_, fn + static_cast<size_t>(t) * d_,
                    sizeof(float) * d_);
      }
    }
  }
}

void CpuForward::QueueExpertsIn(int l, int n, const float* fn) {
  const LayerParams& p = params_[l];
  const int f = c_.expert_ffn_dim;
  ForEachRoutedExpert(a_, c_.n_experts, [&](int e, int cnt, size_t s) {
    const float* xin = n == 1 ? fn : a_.xe.data() + s * d_;
    cpu::AppendMatTasks(cut_, xin, cnt, p.gate[e], a_.ge.data() + s * f, f, tasks_, &p.up[e],
                        a_.ue.data() + s * f, a_.he.data() + s * f);
  });
  if (c_.shared_expert_ffn_dim > 0) {
    const int sf = c_.shared_expert_ffn_dim;
    cpu::AppendMatTasks(cut_, fn, n, p.shared_gate, a_.sg.data(), sf, tasks_, &p.shared_up,
                        a_.su.data(), a_.sh.data());
  }
}

void CpuForward::QueueExpertsOut(int l, int n) {
  const LayerParams& p = params_[l];
  const int f = c_.expert_ffn_dim;
  ForEachRoutedExpert(a_, c_.n_experts, [&](int e, int cnt, size_t s) {
    cpu::AppendMatTasks(cut_, a_.he.data() + s * f, cnt, p.down[e], a_.ye.data() + s * d_, d_,
                        tasks_);
  });
  if (c_.shared_expert_ffn_dim > 0) {
    cpu::AppendMatTasks(cut_, a_.sh.data(), n, p.shared_down, a_.ys.data(), d_, tasks_);
  }
}

void CpuForward::CombineExperts(int n) {
  ProfileScope scope(profiler_.get(), kind_, ProfileOp::kFfn);
  const int K = c_.top_k;
  for (int t = 0; t < n; ++t) {
    float* o = a_.ffn.data() + static_cast<size_t>(t) * d_;
    std::fill(o, o + d_, 0.0f);
    for (int r = 0; r < K; ++r) {
      const float w = a_.weight[t * K + r];
      const float* y = a_.ye.data() + static_cast<size_t>(a_.slot[t * K + r]) * d_;
      for (int i = 0; i < d_; ++i) o[i] = std::fma(w, y[i], o[i]);
    }
    if (c_.shared_expert_ffn_dim > 0) {
      const float* y = a_.ys.data() + static_cast<size_t>(t) * d_;
      for (int i = 0; i < d_; ++i) o[i] = o[i] + y[i];
    }
  }
}

}  // namespace samebits::model::cpu
