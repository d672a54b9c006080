// samebits-adapter-shared-check: links the samebits sources the llama.cpp
// adapter compiles (adapters/llama.cpp/shared_sources.cmake) with nothing
// else of the engine, as the adapter's own project does, and uses them
// once: reads a scenario and writes a step record. Every object of the list
// is linked whole, so a source that needs one the list lacks fails this
// build (tests/CMakeLists.txt), on every machine, without llama.cpp.
#include <cstdio>
#include <exception>

#include "engine/protocol/records.h"
#include "engine/run/scenario.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: samebits-adapter-shared-check SCENARIO\n");
    return 2;
  }
  try {
    const samebits::run::Scenario scenario = samebits::run::LoadScenario(argv[1]);
    samebits::protocol::Step step;
    step.kind = samebits::run::StepKindName(scenario.steps.front().kind);
    std::printf("%s\n", samebits::protocol::ToJsonLine(step).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "samebits-adapter-shared-check: %s\n", e.what());
    return 1;
  }
  return 0;
}
