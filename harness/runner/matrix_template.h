// Configuration name templates: how samebits-engine's own profile
// (engines/samebits.json, `matrix.configurations`) writes its default
// configurations as data although they depend on the command line and on
// the values of its isa axis. A template is a configuration name with
// placeholders, each replaced by text:
//
//   {each:threads}   every --threads value, in the order given (one name
//                    per value, repeats kept)
//   {max:threads}    the largest --threads value
//   {second:threads} the second smallest distinct --threads value (the
//                    smallest when all are equal)
//   {each:isa}       every value of the profile's isa axis but its default,
//                    in the axis's order (ProfileIsas; one name per ISA)
//   {small_chunk}    the small GEMV chunk: "8k" when a multiple of 1024,
//                    else its bytes ("1000")
//
// A template holds at most one `each` placeholder (its names follow that
// list's order). What a template expands to is then read as any
// configuration name, by the profile's grammar (engine_profile.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace samebits::runner {

// What placeholders are replaced with.
struct TemplateInputs {
  std::vector<int> threads;          // --threads, in the order given; not empty
  std::vector<std::string> isas;     // the profile's isa axis (ProfileIsas)
  int64_t small_chunk_bytes = 8192;  // the chunk of {small_chunk}
};

// Whether `text` holds a placeholder (a '{' or '}').
bool IsTemplate(const std::string& text);

// Returns what is wrong with the placeholders of `text`, as what was
// expected instead ("" when nothing is): an unpaired brace, an unknown
// placeholder (the known ones are listed), two `each` placeholders.
std::string TemplateError(const std::string& text);

// Returns the names `text` expands to with `inputs`: one per value of its
// `each` placeholder, in that list's order; else exactly one. Throws
// std::invalid_argument when TemplateError(text) is not "".
std::vector<std::string> ExpandTemplate(const std::string& text, const TemplateInputs& inputs);

}  // namespace samebits::runner
