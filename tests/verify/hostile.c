/* A program that misbehaves on request, for the sandbox tests (written for musify). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "";
  if (!strcmp(what, "write")) {
    FILE* f = fopen(argv[2], "w");
    if (!f) { perror("fopen"); return 3; }
    fputs("escaped\n", f);
    fclose(f);
    FILE* local = fopen("inside.txt", "w");
    if (!local) { perror("local"); return 4; }
    fputs("kept\n", local);
    fclose(local);
    puts("wrote outside");
    return 0;
  }
  if (!strcmp(what, "fork")) {
    for (int i = 0; i < 50; i++)
      if (fork() == 0) { setsid(); fclose(stdout); fclose(stderr); sleep(600); _exit(0); }
    puts("forked 50");
    return 0;
  }
  if (!strcmp(what, "fork-wait")) {
    for (int i = 0; i < 50; i++)
      if (fork() == 0) { sleep(600); _exit(0); }
    sleep(600);
    return 0;
  }
  if (!strcmp(what, "alloc")) {
    size_t total = 0, step = (size_t)1 << 26;
    while (total < ((size_t)30 << 30)) {
      char* p = malloc(step);
      if (!p) { fprintf(stderr, "malloc failed after %zu MiB: Cannot allocate memory\n", total >> 20); return 1; }
      memset(p, 1, step);
      total += step;
    }
    puts("allocated 30 GB");
    return 0;
  }
  if (!strcmp(what, "print")) for (;;) puts("output without end output without end output without end");
  if (!strcmp(what, "loop")) for (;;) {}
  if (!strcmp(what, "socket")) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) { perror("socket"); return 5; }
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(53);
    inet_pton(AF_INET, "8.8.8.8", &a.sin_addr);
    if (connect(s, (struct sockaddr*)&a, sizeof a) != 0) { perror("connect"); return 6; }
    puts("connected");
    return 0;
  }
  return 2;
}
