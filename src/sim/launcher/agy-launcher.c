/*
 * agy-launcher: gives the simulator agy's process shape for discovery
 * (spike-notes §2.1–2.3, spike-notes §10.2, §10.3):
 *   - its own cmdline is `<dir>/bin/agy <args…>` (a symlink to node would put
 *     the script path in argv[1] instead);
 *   - it binds the two loopback listeners itself and keeps them open, so they
 *     appear as socket inodes in /proc/<its pid>/fd;
 *   - it fork+execs node (the simulator) with those listeners as fds 3 (TLS)
 *     and 4 (plain HTTP), and the spawned-process environment newer agy gives
 *     its children (ANTIGRAVITY_CSRF_TOKEN / _LS_ADDRESS / _LS_VERSION);
 *   - like agy, which starts shells and tools, it keeps one more child that
 *     is not the server: an idle node process with that environment and no
 *     listener, so discovery can read the token from a child's environ.
 *
 * The child's command line comes from the environment, never a shell:
 *   AGY_SIM_NODE  absolute path of node
 *   AGY_SIM_ARGV  newline-separated arguments placed before this launcher's own
 *   AGY_SIM_FOREGROUND  "1": when stdin is a terminal, become the terminal's
 *                       foreground process group (and lead it), so tmux
 *                       reports `agy` as the pane's #{pane_current_command}:
 *                       tmux names a pane by the argv[0] of the foreground
 *                       group's leader (spike-notes §14 #10). The
 *                       simulator child inherits the group and keeps the tty.
 * Signals SIGINT/SIGTERM/SIGHUP are forwarded; the exit status is the child's.
 * The idle child is ended when the simulator ends, and follows the launcher
 * if the launcher itself is killed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

static volatile pid_t child_pid = -1;

/* Exits when its parent goes away, even where PR_SET_PDEATHSIG does not exist. */
static const char IDLE_SCRIPT[] =
    "const parent = process.ppid;"
    "setInterval(() => { if (process.ppid !== parent) process.exit(0); }, 500);"
    "process.on('SIGTERM', () => process.exit(0));";

/* The idle child: stdio on /dev/null, none of our listeners, our spawned-process environment. */
static pid_t start_idle_child(const char *node, int tls_fd, int plain_fd) {
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid != 0) return pid;
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
  if (getppid() != parent) _exit(0);
  int devnull = open("/dev/null", O_RDWR);
  if (devnull >= 0) {
    dup2(devnull, 0);
    dup2(devnull, 1);
    dup2(devnull, 2);
    if (devnull > 2) close(devnull);
  }
  close(tls_fd);
  close(plain_fd);
  unsetenv("AGY_SIM_NODE");
  unsetenv("AGY_SIM_ARGV");
  char *idle_argv[] = {(char *)node, "-e", (char *)IDLE_SCRIPT, NULL};
  execv(node, idle_argv);
  _exit(127);
}

static void forward(int sig) {
  if (child_pid > 0) kill(child_pid, sig);
}

static pid_t parent_group = -1;

/* Leads a new process group that owns the terminal's foreground. */
static void take_foreground(void) {
  const char *wanted = getenv("AGY_SIM_FOREGROUND");
  unsetenv("AGY_SIM_FOREGROUND");
  if (wanted == NULL || strcmp(wanted, "1") != 0 || !isatty(STDIN_FILENO)) return;
  pid_t before = tcgetpgrp(STDIN_FILENO);
  if (before < 0 || setpgid(0, 0) < 0) return;
  /* A background group may not change the foreground unless SIGTTOU is ignored. */
  void (*old)(int) = signal(SIGTTOU, SIG_IGN);
  if (tcsetpgrp(STDIN_FILENO, getpid()) == 0) parent_group = before;
  signal(SIGTTOU, old);
}

/* Gives the terminal back to the group that had it, so the parent can use it again. */
static void give_foreground_back(void) {
  if (parent_group <= 0) return;
  void (*old)(int) = signal(SIGTTOU, SIG_IGN);
  tcsetpgrp(STDIN_FILENO, parent_group);
  signal(SIGTTOU, old);
}

static int listen_loopback(int *port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(fd, 128) < 0 ||
      getsockname(fd, (struct sockaddr *)&addr, &len) < 0) {
    close(fd);
    return -1;
  }
  *port = ntohs(addr.sin_port);
  /* Move above the low fds so dup2 onto 3 and 4 can never clobber the other. */
  int high = fcntl(fd, F_DUPFD, 10);
  close(fd);
  return high;
}

int main(int argc, char **argv) {
  const char *node = getenv("AGY_SIM_NODE");
  const char *extra = getenv("AGY_SIM_ARGV");
  if (node == NULL || node[0] == '\0') {
    fprintf(stderr, "agy (simulated): AGY_SIM_NODE is not set; start it with `agy-bridge sim --as-agy`\n");
    return 2;
  }

  int port_a = 0, port_b = 0;
  int fd_a = listen_loopback(&port_a);
  int fd_b = listen_loopback(&port_b);
  if (fd_a < 0 || fd_b < 0) {
    perror("agy (simulated): cannot listen on 127.0.0.1");
    return 1;
  }
  /* agy 1.0.10: the lower port is the TLS one. */
  int tls_fd = port_a < port_b ? fd_a : fd_b;
  int plain_fd = port_a < port_b ? fd_b : fd_a;
  int plain_port = port_a < port_b ? port_b : port_a;

  /* child argv: node, AGY_SIM_ARGV lines, then our own arguments. */
  char *extra_copy = strdup(extra == NULL ? "" : extra);
  size_t cap = (size_t)argc + 2;
  for (const char *p = extra_copy; *p; p++) cap += (*p == '\n');
  char **child_argv = calloc(cap + 1, sizeof(char *));
  if (extra_copy == NULL || child_argv == NULL) return 1;
  size_t n = 0;
  child_argv[n++] = (char *)node;
  for (char *line = strtok(extra_copy, "\n"); line != NULL; line = strtok(NULL, "\n")) child_argv[n++] = line;
  for (int i = 1; i < argc; i++) child_argv[n++] = argv[i];
  child_argv[n] = NULL;

  char address[64];
  snprintf(address, sizeof address, "localhost:%d", plain_port);
  setenv("ANTIGRAVITY_LS_ADDRESS", address, 1);
  /* `agy-bridge sim` sets the persona's version (cli-1.2); started by hand, the launcher says cli-sim. */
  setenv("ANTIGRAVITY_LS_VERSION", "cli-sim", 0);
  char pid_text[32];
  snprintf(pid_text, sizeof pid_text, "%d", (int)getpid());
  setenv("AGY_SIM_LAUNCHER_PID", pid_text, 1);
  /* Only a FIRST-argument token is agy's own (a later one may be prompt text). */
  if (argc >= 3 && strcmp(argv[1], "--csrf_token") == 0) setenv("ANTIGRAVITY_CSRF_TOKEN", argv[2], 1);
  else unsetenv("ANTIGRAVITY_CSRF_TOKEN");

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = forward;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);

  take_foreground();

  pid_t idle_pid = start_idle_child(node, tls_fd, plain_fd);
  if (idle_pid < 0) {
    perror("agy (simulated): fork");
    return 1;
  }

  pid_t pid = fork();
  if (pid < 0) {
    perror("agy (simulated): fork");
    kill(idle_pid, SIGTERM);
    return 1;
  }
  if (pid == 0) {
#ifdef __linux__
    /* If the launcher dies without forwarding (SIGKILL), the simulator follows. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    if (dup2(tls_fd, 3) < 0 || dup2(plain_fd, 4) < 0) _exit(126);
    close(tls_fd);
    close(plain_fd);
    execv(node, child_argv);
    fprintf(stderr, "agy (simulated): cannot run %s: %s\n", node, strerror(errno));
    _exit(127);
  }
  child_pid = pid;

  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      perror("agy (simulated): waitpid");
      kill(idle_pid, SIGTERM);
      return 1;
    }
  }
  kill(idle_pid, SIGTERM);
  while (waitpid(idle_pid, NULL, 0) < 0 && errno == EINTR) {
  }
  give_foreground_back();
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}
