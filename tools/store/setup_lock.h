// SetupLock: serialises the opening of a result database across llmbench processes.
//
// SQLite cannot be trusted to let two processes create the schema of a new database and switch
// it to WAL at the same time: the journal-mode change takes its RESERVED lock without the busy
// handler ("database is locked" at once) and deletes the rollback journal, so the other
// process's commit can fail with a disk I/O error. ResultStore therefore holds this lock while
// it checks, creates or migrates the schema and sets WAL; later transactions need no lock
// beyond SQLite's own, since every opener leaves the database in WAL mode.
//
// The lock is an flock(2) on the database's directory: it leaves no file behind and does not
// interact with SQLite's fcntl locks on the database file (opening and closing our own
// descriptor of the database file would drop those: the POSIX lock problem). Holders keep it for
// milliseconds; a waiter gives up after `timeout_s` with an Error naming the database.
#pragma once
#include <string>

namespace llmbench {

class SetupLock {
 public:
  explicit SetupLock(const std::string& db_path, double timeout_s = 30.0);
  ~SetupLock();
  SetupLock(const SetupLock&) = delete;
  SetupLock& operator=(const SetupLock&) = delete;

  // Releases the lock early (the destructor releases it otherwise).
  void release();

 private:
  int fd_ = -1;
};

}  // namespace llmbench
