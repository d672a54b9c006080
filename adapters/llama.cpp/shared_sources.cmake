# The samebits sources the llama.cpp adapter compiles into its own project
# (records, hashes, scenarios and their strict JSON, dumps, the machine's
# identity), relative to the repository root, sorted. Listed once here: the
# adapter's CMakeLists.txt builds them, and the root project links them
# alone into samebits-adapter-shared-check (tests/CMakeLists.txt), so a
# the ordinary build and its test, not only the llama.cpp step of CI, which
# runs last and needs llama.cpp.
set(samebits_adapter_shared_sources
  engine/numerics/hash.cc
  engine/platform/cpu_features.cc
  engine/platform/machine.cc
  engine/protocol/records.cc
  engine/run/input_file.cc
  engine/run/logit_dump.cc
  engine/run/scenario.cc
  engine/run/strict_json.cc
)
