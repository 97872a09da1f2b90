/* A tiny UDP client for tests/cli/test_tool_cli.sh (bash's /dev/udp cannot read datagrams):
 *     udp_send PORT MESSAGE [TRIES]
 * sends MESSAGE to 127.0.0.1:PORT; with TRIES > 0 it sends it again every 0.2 s until a reply
 * comes (at most TRIES times) and prints the reply. Exit 0 on success, 1 otherwise. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: udp_send PORT MESSAGE [TRIES]\n");
        return 1;
    }
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) return 1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)atoi(argv[1]));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int tries = argc > 3 ? atoi(argv[3]) : 0;
    size_t len = strlen(argv[2]);
    for (int i = 0; i < (tries > 0 ? tries : 1); ++i) {
        if (sendto(fd, argv[2], len, 0, (struct sockaddr *)&a, sizeof a) != (ssize_t)len) return 1;
        if (tries <= 0) return 0;
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 200) == 1) {
            char buf[512];
            ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
            if (n > 0) {
                buf[n] = '\0';
                fputs(buf, stdout);
                return 0;
            }
        }
    }
    return 1;
}
