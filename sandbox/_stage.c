/*
 * The sandbox's own process inside bubblewrap, compiled: the same protocol and the same steps
 * as _stage.py, which stays the fallback where no C compiler is available (see _stagebin.py).
 *
 * bubblewrap starts it as pid 1 of the run's PID namespace, under the seccomp filter, with
 * "KEY=VALUE... -- ARGV" as its arguments. In order it
 *   1. joins the run's memory cgroup (where the caller made one and no launcher was born in
 *      it), makes itself undumpable, sets no_new_privs and leads a process group of its own,
 *      which the run joins;
 *   2. for a root caller hands the work dir to the run's leased uid, drops the bounding set,
 *      its groups and uids, and re-arms the parent-death signal a uid change clears;
 *   3. lays out HOME, TMPDIR and the XDG dirs and copies the fixtures, bounded in entries and
 *      bytes, regular files and directories only, through O_NOFOLLOW descriptors;
 *   4. builds the Landlock ruleset and starts the run (vfork) with its OOM score raised; the
 *      run takes its rlimits, enters the ruleset, closes every other descriptor and execs the
 *      program, and this process lowers its own score again;
 *   5. reaps every process of the namespace until the run's first process ends, writes how it
 *      ended on the report pipe (which the run never holds) and exits, killing what is left.
 * Any failure before the exec is written to the report as "error ..." and nothing runs; the
 * end of the control pipe (the caller is gone) ends this process at once.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Landlock (linux/landlock.h), spelled out: the build must not depend on the headers' age.
 * The syscall numbers are the generic table's, the same on every architecture. */
#define LL_CREATE_RULESET 444
#define LL_ADD_RULE 445
#define LL_RESTRICT_SELF 446
#define LL_RULE_PATH_BENEATH 1
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_TRUNCATE (1ULL << 14)
#define LL_FS_IOCTL_DEV (1ULL << 15)
#define LL_NET_TCP 3ULL /* BIND_TCP | CONNECT_TCP */
#define LL_SCOPES 3ULL  /* ABSTRACT_UNIX_SOCKET | SIGNAL */

#define CLOSE_RANGE_NR 436
#define CLOSE_RANGE_FLAG_CLOEXEC 4U /* CLOSE_RANGE_CLOEXEC, Linux 5.11 */
#define LAUNCH_MAX_FDS 32
#define LAUNCH_MAX_BYTES (1U << 20)
#define LAUNCH_MAX_WORDS 8192
/* capset(2) (linux/capability.h), spelled out like Landlock's. */
#define CAPABILITY_VERSION_3 0x20080522
#define CAP_AMBIENT 47          /* PR_CAP_AMBIENT */
#define CAP_AMBIENT_CLEAR_ALL 4 /* PR_CAP_AMBIENT_CLEAR_ALL */
#define MAX_LIST 64
#define MAX_ABI 1000
#define COPY_CHUNK (1 << 16)
#define CAP_LAST 63

struct capability_header {
    uint32_t version;
    int pid;
};

struct capability_data {
    uint32_t effective;
    uint32_t permitted;
    uint32_t inheritable;
};

struct landlock_path_beneath {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

struct settings {
    int report;
    int control;
    int cgroup;
    const char *work;
    const char *fixtures;
    unsigned long long max_entries;
    unsigned long long max_bytes;
    int drop_root;
    unsigned long long uid;
    unsigned long long gid;
    int has_memory;
    unsigned long long memory;
    int has_nproc;
    unsigned long long nproc;
    unsigned long long landlock;
    const char *write[MAX_LIST];
    size_t n_write;
    const char *dir[MAX_LIST];
    size_t n_dir;
    char **argv;
};

struct copy_state {
    unsigned long long entries;
    unsigned long long copied;
    unsigned long long max_entries;
    unsigned long long max_bytes;
    char relative[PATH_MAX];
};

static const char *const devices[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                                      "/dev/urandom"};

/* Why the run cannot start, for the report's "error" line. */
static char failure[1024];
static char copy_buffer[COPY_CHUNK];

static int fail(const char *format, ...) __attribute__((format(printf, 1, 2)));

static int fail(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    int n = vsnprintf(failure, sizeof failure, format, args);
    va_end(args);
    if (n < 0)
        snprintf(failure, sizeof failure, "cannot format an error");
    return -1;
}

/* Like fail(), with errno's text after the message. */
static int fail_errno(const char *what, const char *detail)
{
    int saved = errno;
    return fail("%s%s%s: %s", what, detail ? " " : "", detail ? detail : "", strerror(saved));
}

static int write_all(int fd, const char *data, size_t length)
{
    while (length > 0) {
        ssize_t n = write(fd, data, length);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0) {
            errno = EIO;
            return -1;
        }
        data += n;
        length -= (size_t)n;
    }
    return 0;
}

static void report_line(int fd, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void report_line(int fd, const char *format, ...)
{
    char line[sizeof failure + 64];
    va_list args;
    va_start(args, format);
    int n = vsnprintf(line, sizeof line - 1, format, args);
    va_end(args);
    if (n < 0)
        return;
    size_t length = (size_t)n < sizeof line - 1 ? (size_t)n : sizeof line - 2;
    /* One line per fact: a name from the fixtures cannot start a line of its own. */
    for (size_t i = 0; i < length; i++) {
        if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
            line[i] = '?';
    }
    line[length++] = '\n';
    /* Nothing is left to tell if the report pipe is gone: the caller then reports no status. */
    (void)write_all(fd, line, length);
}

/* A decimal number, whole and in range, or -1. */
static int parse_number(const char *text, unsigned long long max, unsigned long long *out)
{
    if (*text < '0' || *text > '9')
        return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno != 0 || end == NULL || *end != '\0' || value > max)
        return -1;
    *out = value;
    return 0;
}

static int parse_fd(const char *key, const char *text, int *out)
{
    unsigned long long value;
    if (parse_number(text, INT_MAX, &value) < 0)
        return fail("setting %s: not a descriptor: %.64s", key, text);
    *out = (int)value;
    return 0;
}

static int add_to_list(const char **list, size_t *count, const char *key, const char *value)
{
    if (*count >= MAX_LIST)
        return fail("setting %s: more than %d values", key, MAX_LIST);
    list[(*count)++] = value;
    return 0;
}

/* A limit given as a number, where "-1" means none (as the Python stage reads it). */
static int parse_limit(const char *key, const char *text, int *has, unsigned long long *out)
{
    if (strcmp(text, "-1") == 0) {
        *has = 0;
        return 0;
    }
    if (parse_number(text, ULLONG_MAX, out) < 0)
        return fail("setting %s: not a number: %.64s", key, text);
    *has = 1;
    return 0;
}

static int parse_settings(int argc, char **argv, struct settings *s)
{
    int split = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            split = i;
            break;
        }
    }
    if (split < 0)
        return fail("settings: no \"--\" before the program");
    int has_report = 0, has_control = 0, has_uid = 0, has_gid = 0;
    for (int i = 1; i < split; i++) {
        char *word = argv[i];
        char *equals = strchr(word, '=');
        if (equals == NULL)
            return fail("settings: not KEY=VALUE: %.64s", word);
        *equals = '\0';
        const char *key = word, *value = equals + 1;
        int rc = 0;
        if (strcmp(key, "report") == 0) {
            rc = parse_fd(key, value, &s->report);
            has_report = 1;
        } else if (strcmp(key, "control") == 0) {
            rc = parse_fd(key, value, &s->control);
            has_control = 1;
        } else if (strcmp(key, "cgroup") == 0) {
            rc = parse_fd(key, value, &s->cgroup);
        } else if (strcmp(key, "work") == 0) {
            s->work = value;
        } else if (strcmp(key, "fixtures") == 0) {
            s->fixtures = value;
        } else if (strcmp(key, "max_entries") == 0) {
            if (parse_number(value, ULLONG_MAX, &s->max_entries) < 0)
                rc = fail("setting max_entries: not a number");
        } else if (strcmp(key, "max_bytes") == 0) {
            if (parse_number(value, ULLONG_MAX, &s->max_bytes) < 0)
                rc = fail("setting max_bytes: not a number");
        } else if (strcmp(key, "uid") == 0) {
            if (parse_number(value, UINT_MAX - 1, &s->uid) < 0 || s->uid == 0)
                rc = fail("setting uid: not an unprivileged uid: %.64s", value);
            has_uid = 1;
        } else if (strcmp(key, "gid") == 0) {
            if (parse_number(value, UINT_MAX - 1, &s->gid) < 0 || s->gid == 0)
                rc = fail("setting gid: not an unprivileged gid: %.64s", value);
            has_gid = 1;
        } else if (strcmp(key, "memory") == 0) {
            rc = parse_limit(key, value, &s->has_memory, &s->memory);
        } else if (strcmp(key, "nproc") == 0) {
            rc = parse_limit(key, value, &s->has_nproc, &s->nproc);
        } else if (strcmp(key, "landlock") == 0) {
            if (parse_number(value, MAX_ABI, &s->landlock) < 0)
                rc = fail("setting landlock: not an ABI version: %.64s", value);
        } else if (strcmp(key, "write") == 0) {
            rc = add_to_list(s->write, &s->n_write, key, value);
        } else if (strcmp(key, "dir") == 0) {
            rc = add_to_list(s->dir, &s->n_dir, key, value);
        }
        /* Other keys are the Python stage's business, as its unknown keys are ignored. */
        if (rc < 0)
            return -1;
    }
    if (!has_report)
        return fail("settings: no report descriptor");
    if (!has_control)
        return fail("settings: no control descriptor");
    if (s->work == NULL || s->work[0] != '/')
        return fail("settings: no absolute work dir");
    if (has_uid != has_gid)
        return fail("settings: uid and gid come together");
    s->drop_root = has_uid;
    if (s->fixtures != NULL && s->fixtures[0] != '/')
        return fail("settings: the fixtures are not an absolute path");
    s->argv = argv + split + 1;
    if (s->argv[0] == NULL || s->argv[0][0] == '\0')
        return fail("settings: no program to run");
    return 0;
}

/* Join the run's memory cgroup: "0" moves the writer, and the kernel checks the write against
 * whoever opened the descriptor (the caller). Everything this process and the run then
 * charge, the fixtures' copy included, counts against the cgroup's limit. */
static int join_cgroup(const struct settings *s)
{
    int rc = 0;
    if (write(s->cgroup, "0", 1) != 1)
        rc = fail_errno("cannot join the run's memory cgroup", NULL);
    close(s->cgroup);
    return rc;
}

static int drop_root(const struct settings *s)
{
    uid_t uid = (uid_t)s->uid;
    gid_t gid = (gid_t)s->gid;
    if (chown(s->work, uid, gid) < 0)
        return fail_errno("chown", s->work);
    for (int cap = 0; cap <= CAP_LAST; cap++) {
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
            /* Past the kernel's last capability: nothing is left to drop. */
            if (errno == EINVAL)
                break;
            return fail_errno("prctl PR_CAPBSET_DROP", NULL);
        }
    }
    if (setgroups(0, NULL) < 0)
        return fail_errno("setgroups", NULL);
    if (setresgid(gid, gid, gid) < 0)
        return fail_errno("setresgid", NULL);
    if (setresuid(uid, uid, uid) < 0)
        return fail_errno("setresuid", NULL);
    uid_t ruid, euid, suid;
    gid_t rgid, egid, sgid;
    if (getresuid(&ruid, &euid, &suid) < 0 || getresgid(&rgid, &egid, &sgid) < 0)
        return fail_errno("getresuid", NULL);
    if (ruid != uid || euid != uid || suid != uid || rgid != gid || egid != gid || sgid != gid)
        return fail("the uid did not change to %llu", s->uid);
    /* The uid change emptied the effective and permitted sets; the inheritable one still holds
     * what bubblewrap let this process keep. Nothing can regain them (no_new_privs, an empty
     * bounding set), but a run holds no capability in any set. */
    struct capability_header header = {CAPABILITY_VERSION_3, 0};
    struct capability_data none[2] = {{0, 0, 0}, {0, 0, 0}};
    if (syscall(SYS_capset, &header, none) < 0)
        return fail_errno("capset", NULL);
    if (prctl(CAP_AMBIENT, CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
        return fail_errno("prctl PR_CAP_AMBIENT", NULL);
    /* A uid change clears the parent-death signal and makes the process dumpable again. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
        return fail_errno("prctl PR_SET_PDEATHSIG", NULL);
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
        return fail_errno("prctl PR_SET_DUMPABLE", NULL);
    return 0;
}

static int make_dir(const char *path)
{
    if (mkdir(path, 0700) < 0 && errno != EEXIST)
        return fail_errno("mkdir", path);
    return 0;
}

static int layout(const struct settings *s)
{
    if (chmod(s->work, 0700) < 0)
        return fail_errno("chmod", s->work);
    char path[PATH_MAX];
    for (size_t i = 0; i < s->n_dir; i++) {
        int n = snprintf(path, sizeof path, "%s/%s", s->work, s->dir[i]);
        if (n < 0 || (size_t)n >= sizeof path)
            return fail("layout: a path too long below %s", s->work);
        /* The settings list parents first: one mkdir each, and only a missing parent makes
         * it walk the path. */
        if (mkdir(path, 0700) == 0 || errno == EEXIST)
            continue;
        if (errno != ENOENT)
            return fail_errno("mkdir", path);
        /* Every parent first, as mkdir -p. */
        for (char *slash = path + strlen(s->work) + 1; (slash = strchr(slash, '/')); slash++) {
            *slash = '\0';
            int rc = make_dir(path);
            *slash = '/';
            if (rc < 0)
                return -1;
        }
        if (make_dir(path) < 0)
            return -1;
    }
    return 0;
}

/* Append "/name" (or "name" at the top) to the relative path, for messages; -1 if too long. */
static int push_name(struct copy_state *c, size_t length, const char *name)
{
    int n = snprintf(c->relative + length, sizeof c->relative - length, "%s%s",
                     length ? "/" : "", name);
    if (n < 0 || (size_t)n >= sizeof c->relative - length)
        return fail("fixtures: a path longer than %zu bytes", sizeof c->relative - 1);
    return 0;
}

static int copy_file(int src_dir, int dst_dir, const char *name, struct copy_state *c)
{
    /* O_NOFOLLOW, O_NONBLOCK and O_NOCTTY: a file swapped for a link, a FIFO or a terminal is
     * neither followed, waited on nor made the stage's terminal (it leads a session); fstat
     * then proves it is a regular file before a byte is read. */
    int in = openat(src_dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (in < 0)
        return fail_errno("fixtures: open", c->relative);
    struct stat info;
    if (fstat(in, &info) < 0) {
        fail_errno("fixtures: fstat", c->relative);
        close(in);
        return -1;
    }
    if (!S_ISREG(info.st_mode)) {
        close(in);
        return fail("fixtures: %s is not a regular file", c->relative);
    }
    mode_t mode = (info.st_mode & 0111) ? 0755 : 0644;
    int out = openat(dst_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (out < 0) {
        fail_errno("fixtures: create", c->relative);
        close(in);
        return -1;
    }
    int rc = 0;
    for (;;) {
        ssize_t n = read(in, copy_buffer, sizeof copy_buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = fail_errno("fixtures: read", c->relative);
            break;
        }
        if (n == 0)
            break;
        if ((unsigned long long)n > c->max_bytes - c->copied) {
            rc = fail("fixtures: more bytes than the limit allows");
            break;
        }
        c->copied += (unsigned long long)n;
        if (write_all(out, copy_buffer, (size_t)n) < 0) {
            rc = fail_errno("fixtures: write", c->relative);
            break;
        }
    }
    if (close(out) < 0 && rc == 0)
        rc = fail_errno("fixtures: close", c->relative);
    close(in);
    return rc;
}

/* Copy the directory open as src_dir into dst_dir; both descriptors are this call's to close. */
static int copy_tree(int src_dir, int dst_dir, struct copy_state *c)
{
    DIR *listing = fdopendir(src_dir);
    if (listing == NULL) {
        fail_errno("fixtures: list", c->relative[0] ? c->relative : ".");
        close(src_dir);
        close(dst_dir);
        return -1;
    }
    size_t length = strlen(c->relative);
    int rc = 0;
    for (;;) {
        errno = 0;
        struct dirent *entry = readdir(listing);
        if (entry == NULL) {
            if (errno != 0)
                rc = fail_errno("fixtures: list", length ? c->relative : ".");
            break;
        }
        const char *name = entry->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
            continue;
        c->entries++;
        if (c->entries > c->max_entries) {
            rc = fail("fixtures: more than %llu entries", c->max_entries);
            break;
        }
        if (push_name(c, length, name) < 0) {
            rc = -1;
            break;
        }
        struct stat info;
        if (fstatat(src_dir, name, &info, AT_SYMLINK_NOFOLLOW) < 0) {
            rc = fail_errno("fixtures: stat", c->relative);
            break;
        }
        if (S_ISDIR(info.st_mode)) {
            /* EEXIST: one of the layout's dirs; O_NOFOLLOW below proves it is a directory. */
            if (mkdirat(dst_dir, name, 0755) < 0 && errno != EEXIST) {
                rc = fail_errno("fixtures: mkdir", c->relative);
                break;
            }
            int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
            int src = openat(src_dir, name, flags);
            if (src < 0) {
                rc = fail("fixtures: %s is no longer a directory (%s)", c->relative,
                          strerror(errno));
                break;
            }
            int dst = openat(dst_dir, name, flags);
            if (dst < 0) {
                rc = fail_errno("fixtures: open", c->relative);
                close(src);
                break;
            }
            if (copy_tree(src, dst, c) < 0) {
                rc = -1;
                break;
            }
        } else if (S_ISREG(info.st_mode)) {
            if (copy_file(src_dir, dst_dir, name, c) < 0) {
                rc = -1;
                break;
            }
        } else {
            rc = fail("fixtures: %s is not a regular file or directory", c->relative);
            break;
        }
        c->relative[length] = '\0';
    }
    closedir(listing);
    close(dst_dir);
    return rc;
}

static int copy_fixtures(const struct settings *s)
{
    static struct copy_state c;
    c.max_entries = s->max_entries;
    c.max_bytes = s->max_bytes;
    int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int src = open(s->fixtures, flags);
    if (src < 0)
        return fail_errno("fixtures: open", s->fixtures);
    int dst = open(s->work, flags);
    if (dst < 0) {
        fail_errno("fixtures: open", s->work);
        close(src);
        return -1;
    }
    return copy_tree(src, dst, &c);
}

static uint64_t fs_rights(unsigned long long abi)
{
    if (abi >= 5)
        return (1ULL << 16) - 1;
    if (abi >= 3)
        return (1ULL << 15) - 1;
    if (abi >= 2)
        return (1ULL << 14) - 1;
    return (1ULL << 13) - 1;
}

/* A rule for path; one that cannot be opened is skipped when optional (a device this host
 * lacks), else an error. */
static int add_rule(int ruleset, const char *path, uint64_t rights, int optional)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0 && optional)
        return 0;
    if (fd < 0)
        return fail_errno("landlock: open", path);
    struct landlock_path_beneath rule = {.allowed_access = rights, .parent_fd = fd};
    long rc = syscall(LL_ADD_RULE, ruleset, LL_RULE_PATH_BENEATH, &rule, 0);
    int saved = errno;
    close(fd);
    errno = saved;
    if (rc < 0)
        return fail_errno("landlock_add_rule", path);
    return 0;
}

/* Build the run's ruleset for this ABI; its descriptor, or -1. Reports the layers it holds. */
static int landlock_ruleset(const struct settings *s)
{
    uint64_t handled_fs = fs_rights(s->landlock);
    /* struct landlock_ruleset_attr: handled_access_fs, handled_access_net, scoped; the size
     * passed tells the kernel which of them this ABI's caller knows. */
    uint64_t attr[3] = {handled_fs, LL_NET_TCP, LL_SCOPES};
    size_t fields = s->landlock >= 6 ? 3 : s->landlock >= 4 ? 2 : 1;
    long ruleset = syscall(LL_CREATE_RULESET, attr, fields * sizeof attr[0], 0);
    if (ruleset < 0)
        return fail_errno("landlock_create_ruleset", NULL);
    int fd = (int)ruleset;
    uint64_t read_only = LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR;
    uint64_t device = LL_FS_READ_FILE | LL_FS_WRITE_FILE |
                      (handled_fs & (LL_FS_TRUNCATE | LL_FS_IOCTL_DEV));
    int rc = add_rule(fd, "/", read_only, 0);
    for (size_t i = 0; rc == 0 && i < s->n_write; i++)
        rc = add_rule(fd, s->write[i], handled_fs, 0);
    for (size_t i = 0; rc == 0 && i < sizeof devices / sizeof devices[0]; i++)
        rc = add_rule(fd, devices[i], device, 1);
    if (rc < 0) {
        close(fd);
        return -1;
    }
    report_line(s->report, "layers landlock-fs%s%s", fields >= 2 ? " landlock-net" : "",
                fields >= 3 ? " landlock-scope" : "");
    return fd;
}

static int set_limit(int resource, unsigned long long value, const char *name)
{
    struct rlimit limit = {.rlim_cur = (rlim_t)value, .rlim_max = (rlim_t)value};
    if (setrlimit(resource, &limit) < 0)
        return fail_errno("setrlimit", name);
    return 0;
}

/* Close every descriptor above 2, however high its number: a report pipe left open would let
 * the run write its own status. */
static int close_from_three(void)
{
    if (syscall(CLOSE_RANGE_NR, 3U, ~0U, 0U) == 0)
        return 0;
    if (errno != ENOSYS)
        return fail_errno("close_range", NULL);
    /* Before Linux 5.9: the descriptors this process really holds, past any fixed bound. */
    DIR *listing = opendir("/proc/self/fd");
    if (listing == NULL)
        return fail_errno("opendir", "/proc/self/fd");
    int own = dirfd(listing);
    int highest = -1;
    struct dirent *entry;
    while ((entry = readdir(listing)) != NULL) {
        int fd = atoi(entry->d_name);
        if (fd > highest && fd != own)
            highest = fd;
    }
    closedir(listing);
    /* Closing while listing would skip entries: close up to the highest seen, after it. */
    for (int fd = 3; fd <= highest; fd++)
        close(fd);
    return 0;
}

/* The run, not this process, is what the OOM killer should take first: a run inherits its
 * score. This process opens its own score while its /proc files are still its own (before it
 * makes itself undumpable), raises it just before the run starts and lowers it right after. */
struct oom_score {
    int fd;
    char before[16];
    size_t length;
};

static int open_oom_score(struct oom_score *oom)
{
    oom->fd = open("/proc/self/oom_score_adj", O_RDWR | O_CLOEXEC);
    if (oom->fd < 0)
        return fail_errno("open", "/proc/self/oom_score_adj");
    ssize_t n = pread(oom->fd, oom->before, sizeof oom->before - 1, 0);
    if (n <= 0)
        return fail_errno("read", "/proc/self/oom_score_adj");
    oom->length = (size_t)n;
    return 0;
}

/* The kernel's own sigaction, as rt_sigaction takes it: the C library's refuses the two
 * signals it reserves for its threads (32 and 33), which the caller may still ignore. */
struct kernel_sigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    uint64_t mask;
};

/* An ignored signal stays ignored across exec (whoever ignored it: nohup's SIGHUP, a
 * library's real-time signal); the run must start as any program does, with none. */
static int reset_ignored_signals(void)
{
    for (int number = 1; number <= 64; number++) {
        struct kernel_sigaction current;
        memset(&current, 0, sizeof current);
        if (syscall(SYS_rt_sigaction, number, NULL, &current, sizeof current.mask) < 0)
            continue;
        if (current.handler != SIG_IGN)
            continue;
        struct kernel_sigaction fallback;
        memset(&fallback, 0, sizeof fallback);
        fallback.handler = SIG_DFL;
        if (syscall(SYS_rt_sigaction, number, &fallback, NULL, sizeof fallback.mask) < 0)
            return fail_errno("rt_sigaction", NULL);
    }
    return 0;
}

static int prepare_child(const struct settings *s, int ruleset, const sigset_t *mask)
{
    if (reset_ignored_signals() < 0)
        return -1;
    if (s->has_memory && set_limit(RLIMIT_AS, s->memory, "RLIMIT_AS") < 0)
        return -1;
    if (s->has_nproc && set_limit(RLIMIT_NPROC, s->nproc, "RLIMIT_NPROC") < 0)
        return -1;
    if (set_limit(RLIMIT_CORE, 0, "RLIMIT_CORE") < 0)
        return -1;
    if (ruleset >= 0 && syscall(LL_RESTRICT_SELF, ruleset, 0) < 0)
        return fail_errno("landlock_restrict_self", NULL);
    if (sigprocmask(SIG_SETMASK, mask, NULL) < 0)
        return fail_errno("sigprocmask", NULL);
    return close_from_three();
}

/* Exec argv the way execvp does, without its shell fallback: on the run's PATH unless it
 * names a path. Returns the first error that is not "no such file", as execvp reports. */
static int exec_program(char **argv)
{
    const char *program = argv[0];
    if (strchr(program, '/') != NULL) {
        execv(program, argv);
        return errno;
    }
    const char *path = getenv("PATH");
    if (path == NULL)
        path = "/usr/bin:/bin";
    int first = 0;
    char candidate[PATH_MAX];
    for (const char *start = path;; ) {
        const char *end = strchr(start, ':');
        size_t length = end ? (size_t)(end - start) : strlen(start);
        const char *directory = length ? start : ".";
        int shown = length ? (int)length : 1;
        int n = snprintf(candidate, sizeof candidate, "%.*s/%s", shown, directory, program);
        int error = ENAMETOOLONG;
        if (n >= 0 && (size_t)n < sizeof candidate) {
            execv(candidate, argv);
            error = errno;
        }
        if (first == 0 || (first == ENOENT && error != ENOENT))
            first = error;
        if (end == NULL)
            break;
        start = end + 1;
    }
    return first ? first : ENOENT;
}

static void child(const struct settings *s, int ruleset, const sigset_t *mask)
    __attribute__((noreturn));

/* Set by the vforked run when it cannot exec, with the reason in `failure`: both are this
 * process's memory, which the run shares until it execs, so nothing the program does once it
 * runs can set them. Whether a run started is told by this alone, never by its output. */
static volatile sig_atomic_t run_not_started;

static void child(const struct settings *s, int ruleset, const sigset_t *mask)
{
    if (prepare_child(s, ruleset, mask) < 0) {
        char reason[sizeof failure];
        memcpy(reason, failure, sizeof reason);
        fail("cannot prepare the run: %s", reason);
    } else {
        int error = exec_program(s->argv);
        fail("execvp %s: %s", s->argv[0], strerror(error));
    }
    run_not_started = 1;
    _exit(127);
}

/* Start the run with vfork: this process waits until the run has exec'd (or exited), so the
 * run gets this process's core at once and no page is copied. Until then the run shares this
 * process's memory: it only makes system calls, on its own part of the stack, writes nothing
 * this process reads afterwards but `run_not_started` and `failure`, and never returns here. */
static pid_t __attribute__((noinline)) start_run(const struct settings *s, int ruleset,
                                                 const sigset_t *mask)
{
    pid_t pid = vfork();
    if (pid == 0)
        child(s, ruleset, mask);
    return pid;
}

/* Reap every process of the namespace until pid ends; 0 with its status, -1 if none is left.
 * The end of the control pipe (the caller is gone) ends this process, and the namespace. */
static int supervise(pid_t pid, int control, int children, int *status)
{
    struct pollfd watched[2] = {{.fd = control, .events = POLLIN}, {.fd = children, .events = POLLIN}};
    for (;;) {
        /* Orphans of the namespace are this process's children too: reap them as they come. */
        for (;;) {
            int wstatus = 0;
            pid_t done = waitpid(-1, &wstatus, WNOHANG);
            if (done == pid) {
                *status = wstatus;
                return 0;
            }
            if (done > 0)
                continue;
            if (done < 0 && errno == EINTR)
                continue;
            if (done < 0)
                return -1;
            break;
        }
        if (poll(watched, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (watched[0].revents)
            _exit(1);
        if (watched[1].revents) {
            struct signalfd_siginfo info[8];
            /* Non-blocking: drain what is there; waitpid above finds every child anyway. */
            while (read(children, info, sizeof info) > 0)
                ;
        }
    }
}

/* The launcher: started ahead of a run and already in the memory cgroup the run will have
 * (joining a cgroup waits out an RCU grace period, milliseconds, which no run should wait),
 * so that bubblewrap, this stage and every process of the run are born in it. It
 *   1. dies with the thread that started it, and joins the cgroup through the descriptor;
 *   2. says it is ready ("r") on its socket, and waits for the launch: a header (the payload's
 *      length, the number of descriptors) that carries the run's descriptors, then the
 *      payload, NUL-terminated words: the directory, the argument count and the arguments,
 *      the environment count and its entries, and the number each descriptor must have;
 *   3. gives each descriptor its number, closes every other one at the exec and execs
 *      bubblewrap in place of itself (the same process, so the caller's child).
 * The caller letting go of the socket ends it. Failures go to its standard error (the run's). */
static void launcher_fail(const char *what)
{
    char line[512];
    int n = snprintf(line, sizeof line, "sandbox launcher: %s: %s\n", what, strerror(errno));
    if (n > 0)
        (void)write_all(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    _exit(127);
}

static void read_exact(int fd, char *into, size_t length)
{
    while (length > 0) {
        ssize_t n = read(fd, into, length);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EPIPE;
            launcher_fail("reading the launch");
        }
        into += n;
        length -= (size_t)n;
    }
}

/* Mark every descriptor above 2 close-on-exec (close_range's flag, else one by one). */
static void cloexec_from_three(void)
{
    if (syscall(CLOSE_RANGE_NR, 3U, ~0U, CLOSE_RANGE_FLAG_CLOEXEC) == 0)
        return;
    DIR *listing = opendir("/proc/self/fd");
    if (listing == NULL)
        launcher_fail("opendir /proc/self/fd");
    struct dirent *entry;
    while ((entry = readdir(listing)) != NULL) {
        int fd = atoi(entry->d_name);
        if (fd > 2 && fd != dirfd(listing))
            (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    closedir(listing);
}

static int launcher_main(int argc, char **argv)
{
    int sock = -1, cgroup = -1;
    unsigned long long parent = 0;
    /* Read in place, unchanged: `ps` shows what it was started with. */
    for (int i = 2; i < argc; i++) {
        if (strncmp(argv[i], "sock=", 5) == 0)
            (void)parse_fd("sock", argv[i] + 5, &sock);
        else if (strncmp(argv[i], "cgroup=", 7) == 0)
            (void)parse_fd("cgroup", argv[i] + 7, &cgroup);
        else if (strncmp(argv[i], "parent=", 7) == 0)
            (void)parse_number(argv[i] + 7, ULLONG_MAX, &parent);
    }
    if (sock < 0 || parent == 0) {
        errno = EINVAL;
        launcher_fail("settings");
    }
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
        launcher_fail("prctl PR_SET_PDEATHSIG");
    /* Started by a caller that is gone already: its signal was never armed. */
    if ((unsigned long long)getppid() != parent)
        _exit(1);
    if (cgroup >= 0) {
        if (write(cgroup, "0", 1) != 1)
            launcher_fail("cannot join the run's memory cgroup");
        close(cgroup);
    }
    if (write_all(sock, "r", 1) < 0)
        launcher_fail("ready");

    uint32_t header[2];
    union {
        char buffer[CMSG_SPACE(sizeof(int) * LAUNCH_MAX_FDS)];
        struct cmsghdr align;
    } control;
    struct iovec part = {.iov_base = header, .iov_len = sizeof header};
    struct msghdr message = {.msg_iov = &part,
                             .msg_iovlen = 1,
                             .msg_control = control.buffer,
                             .msg_controllen = sizeof control.buffer};
    ssize_t got;
    do
        got = recvmsg(sock, &message, MSG_CMSG_CLOEXEC | MSG_WAITALL);
    while (got < 0 && errno == EINTR);
    if (got == 0)
        _exit(0); /* let go of: nothing to start */
    if (got != (ssize_t)sizeof header || (message.msg_flags & (MSG_CTRUNC | MSG_TRUNC))) {
        errno = EPROTO;
        launcher_fail("the launch's header");
    }
    int received[LAUNCH_MAX_FDS];
    size_t count = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&message); c != NULL; c = CMSG_NXTHDR(&message, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        if (count + n > LAUNCH_MAX_FDS) {
            errno = EPROTO;
            launcher_fail("too many descriptors");
        }
        memcpy(received + count, CMSG_DATA(c), n * sizeof(int));
        count += n;
    }
    if (count != header[1] || header[0] == 0 || header[0] > LAUNCH_MAX_BYTES) {
        errno = EPROTO;
        launcher_fail("the launch's header");
    }
    char *payload = malloc((size_t)header[0] + 1);
    char **words = calloc(LAUNCH_MAX_WORDS + 2, sizeof(char *));
    if (payload == NULL || words == NULL)
        launcher_fail("malloc");
    read_exact(sock, payload, header[0]);
    payload[header[0]] = '\0';
    if (payload[header[0] - 1] != '\0') {
        errno = EPROTO;
        launcher_fail("the launch's words");
    }
    size_t n_words = 0;
    for (char *at = payload; at < payload + header[0]; at += strlen(at) + 1) {
        if (n_words >= LAUNCH_MAX_WORDS) {
            errno = E2BIG;
            launcher_fail("the launch's words");
        }
        words[n_words++] = at;
    }
    /* directory, argc, argv..., envc, env..., a target per descriptor */
    unsigned long long n_args = 0, n_env = 0;
    size_t at = 1;
    if (at >= n_words || parse_number(words[at], LAUNCH_MAX_WORDS, &n_args) < 0 || n_args == 0 ||
        at + 1 + n_args >= n_words ||
        parse_number(words[at + 1 + n_args], LAUNCH_MAX_WORDS, &n_env) < 0 ||
        at + 2 + n_args + n_env + count != n_words) {
        errno = EPROTO;
        launcher_fail("the launch's words");
    }
    char **args = calloc(n_args + 1, sizeof(char *));
    char **env = calloc(n_env + 1, sizeof(char *));
    if (args == NULL || env == NULL)
        launcher_fail("malloc");
    memcpy(args, words + at + 1, n_args * sizeof(char *));
    memcpy(env, words + at + 2 + n_args, n_env * sizeof(char *));
    char **targets = words + at + 2 + n_args + n_env;

    int wanted[LAUNCH_MAX_FDS];
    int highest = sock;
    for (size_t i = 0; i < count; i++) {
        unsigned long long number;
        if (parse_number(targets[i], INT_MAX, &number) < 0 || number < 3) {
            errno = EPROTO;
            launcher_fail("a descriptor's number");
        }
        wanted[i] = (int)number;
        if (wanted[i] > highest)
            highest = wanted[i];
        if (received[i] > highest)
            highest = received[i];
    }
    /* Above every number in play first, so that no placement overwrites one still to place;
     * then everything is closed at the exec but the placed ones. */
    int moved[LAUNCH_MAX_FDS];
    for (size_t i = 0; i < count; i++) {
        moved[i] = fcntl(received[i], F_DUPFD_CLOEXEC, highest + 1);
        if (moved[i] < 0)
            launcher_fail("F_DUPFD_CLOEXEC");
        close(received[i]);
    }
    cloexec_from_three();
    for (size_t i = 0; i < count; i++)
        if (dup2(moved[i], wanted[i]) < 0)
            launcher_fail("dup2");
    if (chdir(words[0]) < 0)
        launcher_fail("chdir");
    execve(args[0], args, env);
    launcher_fail("execve");
    return 127;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "launch") == 0)
        return launcher_main(argc, argv);
    static struct settings s = {.report = -1, .control = -1, .cgroup = -1};
    if (parse_settings(argc, argv, &s) < 0) {
        if (s.report < 0) {
            /* No report to write to: the caller then reports that no status came. */
            (void)write_all(2, "sandbox stage: ", 15);
            (void)write_all(2, failure, strlen(failure));
            (void)write_all(2, "\n", 1);
            _exit(1);
        }
        report_line(s.report, "error %s", failure);
        _exit(1);
    }
    if (fcntl(s.report, F_SETFD, FD_CLOEXEC) < 0)
        _exit(1);
    /* bubblewrap execs this file through /proc/self/fd/N: that descriptor has done its job. */
    int self_fd = -1;
    if (sscanf(argv[0], "/proc/self/fd/%d", &self_fd) == 1 && self_fd > 2 &&
        self_fd != s.report && self_fd != s.control)
        close(self_fd);

    int ruleset = -1;
    int children = -1;
    sigset_t blocked, original;
    struct oom_score oom = {.fd = -1};
    int rc = 0;
    if (open_oom_score(&oom) < 0)
        rc = -1;
    else if (s.cgroup >= 0 && join_cgroup(&s) < 0)
        rc = -1;
    else if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
        rc = fail_errno("prctl PR_SET_DUMPABLE", NULL);
    else if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        rc = fail_errno("prctl PR_SET_NO_NEW_PRIVS", NULL);
    /* A signal the run sends to its process group (kill(0)) must reach nothing outside the
     * sandbox. bubblewrap's --new-session gives this process a group (when the caller has a
     * terminal); without it the group is the caller's bubblewrap's, whose leader this
     * namespace cannot see (its id reads 0). */
    else if (getpgid(0) != getpid() && setpgid(0, 0) < 0)
        rc = fail_errno("setpgid", NULL);
    else if (s.drop_root && drop_root(&s) < 0)
        rc = -1;
    /* The caller holds the control pipe open until the run is over: its end means the caller
     * is gone (a root caller's parent-death signal cannot reach this process once its uid
     * changed: the kernel checks it like a kill). */
    else if (fcntl(s.control, F_SETFD, FD_CLOEXEC) < 0)
        rc = fail_errno("control descriptor", NULL);
    else if (layout(&s) < 0)
        rc = -1;
    else if (s.fixtures != NULL && copy_fixtures(&s) < 0)
        rc = -1;
    else if (s.landlock > 0 && (ruleset = landlock_ruleset(&s)) < 0)
        rc = -1;
    else if (chdir(s.work) < 0)
        rc = fail_errno("chdir", s.work);
    else if (sigemptyset(&blocked) < 0 || sigaddset(&blocked, SIGCHLD) < 0 ||
             sigprocmask(SIG_BLOCK, &blocked, &original) < 0)
        rc = fail_errno("sigprocmask", NULL);
    else if ((children = signalfd(-1, &blocked, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
        rc = fail_errno("signalfd", NULL);
    else if (pwrite(oom.fd, "1000", 4, 0) != 4)
        rc = fail_errno("write", "/proc/self/oom_score_adj");
    if (rc < 0) {
        report_line(s.report, "error %s", failure);
        _exit(1);
    }
    pid_t pid = start_run(&s, ruleset, &original);
    if (pid < 0) {
        fail_errno("vfork", NULL);
        report_line(s.report, "error %s", failure);
        _exit(1);
    }
    if (run_not_started) {
        (void)waitpid(pid, NULL, 0);
        report_line(s.report, "error %s", failure);
        _exit(1);
    }
    /* Back to the score this process had (never below it, which needs no capability). Should
     * it fail, this process only shares the run's score, and the OOM killer still takes the
     * larger of the two first: the run. */
    (void)pwrite(oom.fd, oom.before, oom.length, 0);
    close(oom.fd);
    if (ruleset >= 0)
        close(ruleset);
    int status = 0;
    if (supervise(pid, s.control, children, &status) < 0)
        _exit(1);
    if (WIFSIGNALED(status))
        report_line(s.report, "signal %d", WTERMSIG(status));
    else
        report_line(s.report, "exit %d", WEXITSTATUS(status));
    _exit(0);
}
