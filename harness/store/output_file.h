// Where a command's output may go, and how it is written: the one guard
// every file a `samebits` command writes for the user goes through (report
// files, bundles, bench pages), so that no output flag, present or future,
// can destroy the store, a file the same command reads, or a special file.
//
// The rule: an output never names the run store or one of its SQLite side
// files (-wal, -shm, -journal), never an input of the same command, never
// another output of it, compared after following every symlink (and by
// inode, for hard links); it is a regular file or nothing yet, never a
// folder, FIFO, socket or device; a symlink is written through, to its
// target, and stays a symlink.
#pragma once

#include <string>
#include <vector>

namespace samebits::store {

// What one command reads and writes, as given on its command line. `flag`
// names each value in messages ("--report-md", "A").
struct NamedPath {
  std::string flag;
  std::string path;
};
struct CommandPaths {
  std::vector<std::string> stores;        // the store(s) the command may touch
  std::vector<NamedPath> inputs;          // files or folders it reads
  std::vector<NamedPath> outputs;         // files it writes ("" or "-": none, or stdout)
  std::vector<NamedPath> output_folders;  // folders it writes into
};

// Throws std::invalid_argument naming the flag and the reason when an
// output or output folder of `paths` breaks the rule above. Called before
// the command does any work, so a mistake costs nothing.
void CheckCommandOutputs(const CommandPaths& paths);

// Writes `bytes` to `path` whole or not at all: through a temporary file
// beside the final file and a rename, so a reader never sees half a file
// and a failed write leaves the previous one whole. A symlink at `path` is
// followed and its target replaced (the link stays); anything but a regular
// file there is refused. Creates the folder when missing. Throws
// std::runtime_error naming the file.
void WriteOutputFile(const std::string& path, const std::string& bytes);

}  // namespace samebits::store
