#include "engine/formats/tensor_table.h"

#include <cstring>
#include <utility>
#include <vector>

#include "engine/formats/checkpoint.h"
#include "engine/model/quantized_weights.h"
#include "engine/model/tensor_spec.h"
#include "engine/numerics/byte_order.h"

namespace samebits::formats {
namespace {

// Returns the per-expert name for expert `e` of `name` ("..._exps.weight"
// -> "....E.weight"), or "" when `name` is not an expert tensor.
std::string PerExpertName(const std::string& name, int e) {
  const std::string suffix = "_exps.weight";
  if (name.size() <= suffix.size() ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return {};
  }
  return name.substr(0, name.size() - suffix.size()) + "." + std::to_string(e) + ".weight";
}

// Turns a copy of a tensor's little-endian file bytes into native values
// (a no-op on little-endian hosts); throws naming the tensor when its type
// cannot be reordered.
void MakeNative(std::vector<std::byte>& buffer, model::DType dtype, const std::string& label,
                const std::string& name) {
  if (!numerics::SwapLittleEndianInPlace(buffer, dtype)) {
    throw CheckpointError(label + ": tensor '" + name + "' is " + numerics::DTypeName(dtype) +
                          ", which this big-endian host cannot reorder from little-endian");
  }
}

// Returns a view of the per-expert tensors of `spec`, copied side by side
// into a new buffer of `storage`, or an absent view when expert 0 is absent.
model::TensorView GatherExperts(const model::TensorSpec& spec, TensorTable& table,
                                const std::string& label, LoadedStorage& storage) {
  model::TensorView view;
  const int64_t n_experts = spec.shape[0];
  const std::vector<int64_t> one(spec.shape.begin() + 1, spec.shape.end());
  std::vector<FileTensor*> parts;
  for (int64_t e = 0; e < n_experts; ++e) {
    const std::string name = PerExpertName(spec.name, static_cast<int>(e));
    const auto it = table.find(name);
    if (it == table.end()) {
      if (e == 0) return view;
      throw CheckpointError(label + ": tensor '" + name + "' is missing (expert " +
                            std::to_string(e) + " of " + std::to_string(n_experts) + " for '" +
                            spec.name + "')");
    }
    if (it->second.shape != one) {
      throw CheckpointError(label + ": tensor '" + name + "' has shape " +
                            ShapeText(it->second.shape) + ", expected " + ShapeText(one));
    }
    if (it->second.quantized) {
      throw CheckpointError(
          label + ": tensor '" + name + "' is " + numerics::LayoutOf(it->second.quant_type).name +
          "; quantized per-expert tensors are not supported (merge them into '" + spec.name + "')");
    }
    if (!parts.empty() && it->second.dtype != parts[0]->dtype) {
      throw CheckpointError(label + ": tensor '" + name + "' is " +
                            numerics::DTypeName(it->second.dtype) + " but expert 0 is " +
                            numerics::DTypeName(parts[0]->dtype));
    }
    parts.push_back(&it->second);
  }
  view.dtype = parts[0]->dtype;
  view.shape = spec.shape;
  // Sizes are bounded by the file the parts came from, so no overflow here.
  size_t part_bytes = static_cast<size_t>(numerics::DTypeSize(view.dtype));
  for (int64_t d : one) part_bytes *= static_cast<size_t>(d);
  std::vector<std::byte> buffer(part_bytes * parts.size());
  for (size_t e = 0; e < parts.size(); ++e) {
    if (part_bytes > 0) std::memcpy(buffer.data() + e * part_bytes, parts[e]->data, part_bytes);
    parts[e]->used = true;
  }
  MakeNative(buffer, view.dtype, label, spec.name);
  storage.buffers.push_back(std::move(buffer));
  view.data = storage.buffers.back().data();
  return view;
}

// Returns the bytes of one row of `t` (whose last dimension is a row).
int64_t RowBytes(const FileTensor& t) {
  const int64_t cols = t.shape.back();
  if (!t.quantized) return cols * numerics::DTypeSize(t.dtype);
  const numerics::QuantLayout& l = numerics::LayoutOf(t.quant_type);
  return cols / l.block_elements * l.block_bytes;
}

// Splits the fused 2-D tensor `name` of `table` (when present) by rows into
// `parts` (name, rows), in order, as views of its data, and removes it. A
// part already in the table means the file holds both forms: refused.
void SplitRows(TensorTable& table, const std::string& label, const std::string& name,
               const std::vector<std::pair<std::string, int64_t>>& parts) {
  const auto it = table.find(name);
  if (it == table.end()) return;
  const FileTensor fused = it->second;
  table.erase(it);  // an `ffn_up` part may take the fused tensor's own name
  int64_t total = 0;
  std::string expected;
  for (const auto& [part, rows] : parts) {
    total += rows;
    expected += (expected.empty() ? "" : " + ") + std::to_string(rows);
    if (table.count(part) != 0) {
      throw CheckpointError(label + ": tensor '" + name + "' and '" + part +
                            "' are both present; a file holds the fused tensor or its parts");
    }
  }
  if (fused.shape.size() != 2 || fused.shape[0] != total) {
    throw CheckpointError(
        label + ": fused tensor '" + name + "' has shape " + ShapeText(fused.shape) +
        ", expected [" + expected + " rows, " +
        (fused.shape.empty() ? std::string("?") : std::to_string(fused.shape.back())) + "]");
  }
  const int64_t row_bytes = RowBytes(fused);
  int64_t row0 = 0;
  for (const auto& [part, rows] : parts) {
    FileTensor t = fused;
    t.shape = {rows, fused.shape[1]};
    t.data = fused.data + row0 * row_bytes;
    table.emplace(part, t);
    row0 += rows;
  }
}

// Phi-3 style fused tensors, read as their parts (views into the file, no
// copy): `attn_qkv` (rows q, then k, then v) and an `ffn_up` of twice the
// FFN width with no `ffn_gate` (rows gate, then up).
void SplitFusedTensors(const model::ModelConfig& c, TensorTable& table, const std::string& label) {
  const int64_t q_dim = int64_t{c.n_heads} * c.head_dim;
  const int64_t kv_dim = int64_t{c.n_kv_heads} * c.head_dim;
  for (int i = 0; i < c.n_layers(); ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    SplitRows(table, label, b + "attn_qkv.weight",
              {{b + "attn_q.weight", q_dim},
               {b + "attn_k.weight", kv_dim},
               {b + "attn_v.weight", kv_dim}});
    const auto up = table.find(b + "ffn_up.weight");
    if (!c.layers[i].moe && up != table.end() && table.count(b + "ffn_gate.weight") == 0 &&
        up->second.shape.size() == 2 && up->second.shape[0] == 2 * int64_t{c.ffn_dim}) {
      SplitRows(table, label, b + "ffn_up.weight",
                {{b + "ffn_gate.weight", c.ffn_dim}, {b + "ffn_up.weight", c.ffn_dim}});
    }
  }
}

}  // namespace

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

void CheckConfig(const model::ModelConfig& config, const std::string& label) {
  const std::vector<std::string> problems = config.Validate();
  if (problems.empty()) return;
  std::string msg = label + ": the configuration the file describes is not valid:";
  for (const std::string& p : problems) msg += "\n  " + p;
  throw CheckpointError(msg);
}

model::ModelWeights BindTensors(const model::ModelConfig& config, TensorTable& table,
                                const std::string& label, std::shared_ptr<LoadedStorage> storage) {
  model::ModelWeights w;
  w.config = config;
  w.layers.resize(config.layers.size());
  SplitFusedTensors(config, table, label);
  model::ForEachTensor(config, [&](const model::TensorSpec& spec) {
    model::TensorView& slot = spec.slot(w);
    const auto it = table.find(spec.name);
    if (it == table.end()) {
      if (spec.shape.size() == 3) slot = GatherExperts(spec, table, label, *storage);
      if (!slot.present() && spec.required) {
        throw CheckpointError(label + ": required tensor '" + spec.name + "' (shape " +
                              ShapeText(spec.shape) + ") is missing");
      }
      return;
    }
    FileTensor& t = it->second;
    if (t.shape != spec.shape) {
      throw CheckpointError(label + ": tensor '" + spec.name + "' has shape " + ShapeText(t.shape) +
                            ", but the configuration implies " + ShapeText(spec.shape));
    }
    t.used = true;
    if (t.quantized) {
      slot = model::QuantizedView(t.quant_type, t.shape, t.data);
      return;
    }
    slot.dtype = t.dtype;
    slot.shape = t.shape;
    slot.data = t.data;
    // A file may place a tensor at an offset its element type cannot be
    // read from directly (GGUF alignment 1, safetensors offsets), and a
    // big-endian host must reorder the file's little-endian bytes: copy it.
    if (reinterpret_cast<uintptr_t>(t.data) % numerics::DTypeSize(t.dtype) != 0 ||
        !numerics::kLittleEndianHost) {
      storage->buffers.emplace_back(t.data, t.data + slot.bytes());
      MakeNative(storage->buffers.back(), slot.dtype, label, spec.name);
      slot.data = storage->buffers.back().data();
    }
  });
  for (const auto& [name, t] : table) {
    if (!t.used) {
      throw CheckpointError(label + ": tensor '" + name + "' (shape " + ShapeText(t.shape) +
                            ") has no place in the model the metadata describes");
    }
  }
  w.storage = std::move(storage);
  return w;
}

}  // namespace samebits::formats
