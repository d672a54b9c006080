// The one place every byte `samebits` prints passes through. Names, stored
// fields, a child's messages and a bundle's strings reach the terminal
// through many commands; escaping each at its call site was forgotten
// often enough (compare, runs, show) that the escape is now applied to the
// standard streams themselves: after GuardTerminalOutput, stdout, stderr,
// std::cout, std::cerr and std::clog write through AppendTerminalSafe
// (terminal_text.h, kProgramText: line feeds and tabs kept, every other
// control byte, C1 control and byte that is not UTF-8 written as a visible
// escape), so no command, present or future, can send ESC, OSC, BEL or a
// CSI to the user's terminal.
#pragma once

#include <cstdio>

namespace samebits::harness {

// Replaces stdout and stderr (and the C++ streams over them) with guarded
// streams writing to the same file descriptors. Call once, first thing in
// main. Idempotent.
void GuardTerminalOutput();

// Returns the stream for the program's own cursor control on a terminal
// (the progress line's carriage return and erase-line): stderr as it was
// before GuardTerminalOutput. What is written to it is not escaped; write
// only the program's own sequences and text escaped with TerminalSafe.
std::FILE* TerminalControlStream();

}  // namespace samebits::harness
