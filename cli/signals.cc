#include "cli/signals.h"

#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace benchlab {
namespace {

sigset_t TerminationSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

// SIGUSR2 wakes the watcher thread for shutdown; it is never sent from outside.
constexpr int kWakeSignal = SIGUSR2;

}  // namespace

void BlockTerminationSignals() {
  sigset_t set = TerminationSet();
  sigaddset(&set, kWakeSignal);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int WaitForTerminationSignal() {
  sigset_t set = TerminationSet();
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

SignalWatcher::SignalWatcher(std::function<void(int)> on_signal) {
  thread_ = std::thread([on_signal = std::move(on_signal)] {
    sigset_t set = TerminationSet();
    sigaddset(&set, kWakeSignal);
    int sig = 0;
    sigwait(&set, &sig);
    if (sig != kWakeSignal) on_signal(sig);
  });
}

SignalWatcher::~SignalWatcher() {
  pthread_kill(thread_.native_handle(), kWakeSignal);
  thread_.join();
}

bool ExitWithParent(int parent_pid) {
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  return getppid() == parent_pid;
}

}  // namespace benchlab
