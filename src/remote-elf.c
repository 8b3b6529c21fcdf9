/* SPDX-License-Identifier: MIT */
/*
 * The remote reader's way into a process from the outside: the files
 * /proc/PID/maps names, and a symbol's address in the target read from
 * an ELF file's symbol tables (as debuggers find the GDB JIT interface's
 * descriptor).  Everything read is validated: sizes, offsets and counts
 * are bounded before use.
 */
#define _GNU_SOURCE 1
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <latch/layout.h>

#include "remote-private.h"

/* Symbol and string tables larger than this are not read while looking for the registry. */
#define ELF_TABLE_MAX ((size_t)256 << 20)

static bool read_whole(int fd, void *buf, size_t len, uint64_t off)
{
	return off <= (uint64_t)LLONG_MAX && pread(fd, buf, len, (off_t)off) == (ssize_t)len;
}

/* A section of at most ELF_TABLE_MAX bytes, read whole (NULL: not readable). */
static void *read_section(int fd, const ElfW(Shdr) * s)
{
	void *buf;

	if (s->sh_size == 0 || s->sh_size > ELF_TABLE_MAX)
		return NULL;
	buf = malloc(s->sh_size);
	if (buf && !read_whole(fd, buf, s->sh_size, s->sh_offset)) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

/* The value of the object @want in the symbol table @sym (strings @str), or 0. */
static uint64_t symtab_lookup(int fd, const ElfW(Shdr) * sym, const ElfW(Shdr) * str,
                              const char *want)
{
	ElfW(Sym) *syms = read_section(fd, sym);
	char *strs = read_section(fd, str);
	size_t n = syms && strs ? sym->sh_size / sizeof(ElfW(Sym)) : 0, wlen = strlen(want);
	uint64_t value = 0;

	for (size_t i = 0; i < n && !value; i++) {
		const ElfW(Sym) *s = &syms[i];

		if (ELF64_ST_TYPE(s->st_info) == STT_OBJECT && s->st_shndx != SHN_UNDEF &&
		    s->st_name < str->sh_size && str->sh_size - s->st_name > wlen &&
		    memcmp(strs + s->st_name, want, wlen + 1) == 0 &&
		    s->st_size >= sizeof(struct latch_layout_registry))
			value = s->st_value;
	}
	free(syms);
	free(strs);
	return value;
}

/*
 * Where the target mapped @want of the ELF file @f, or 0: the symbol's
 * value from the file's .symtab or .dynsym, plus the load bias (the
 * difference between where the first page is mapped and its address in
 * the file's first PT_LOAD; none for ET_EXEC).
 */
uint64_t latch_remote_elf_symbol_(pid_t pid, const struct latch_remote_mapped *f, const char *want)
{
	char path[PATH_MAX + 32];
	ElfW(Ehdr) eh;
	ElfW(Shdr) *sh = NULL;
	uint64_t value = 0, bias = 0, page = (uint64_t)sysconf(_SC_PAGESIZE);
	int fd;

	/* The file as the target sees it (its mount namespace), else as we do. */
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, f->path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (!read_whole(fd, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
	    (eh.e_type != ET_DYN && eh.e_type != ET_EXEC) || eh.e_shentsize != sizeof(ElfW(Shdr)) ||
	    eh.e_phentsize != sizeof(ElfW(Phdr)) || eh.e_shnum == 0)
		goto out;
	for (unsigned i = 0; i < eh.e_phnum && eh.e_type == ET_DYN; i++) {
		ElfW(Phdr) ph;

		if (!read_whole(fd, &ph, sizeof(ph), eh.e_phoff + (uint64_t)i * sizeof(ph)))
			goto out;
		if (ph.p_type == PT_LOAD) {
			bias = f->start - (ph.p_vaddr & ~(page - 1));
			break;
		}
	}
	sh = calloc(eh.e_shnum, sizeof(*sh));
	if (!sh || !read_whole(fd, sh, eh.e_shnum * sizeof(*sh), eh.e_shoff))
		goto out;
	for (unsigned i = 0; i < eh.e_shnum && !value; i++)
		if ((sh[i].sh_type == SHT_SYMTAB || sh[i].sh_type == SHT_DYNSYM) &&
		    sh[i].sh_link < eh.e_shnum && sh[sh[i].sh_link].sh_type == SHT_STRTAB)
			value = symtab_lookup(fd, &sh[i], &sh[sh[i].sh_link], want);
	if (value)
		value += bias;
out:
	free(sh);
	close(fd);
	return value;
}

/* The files /proc/PID/maps names, each once; -ESRCH, -EPERM or -ENOMEM on failure. */
int latch_remote_mapped_files_(pid_t pid, struct latch_remote_mapped **files, size_t *n)
{
	char path[64], line[PATH_MAX + 128];
	size_t cap = 0;
	FILE *f;

	*files = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == EACCES || errno == EPERM ? -EPERM : -ESRCH;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, offset;
		int at = 0;
		char *file;
		size_t len;
		bool seen = false;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &start, &end, &offset, &at) < 3 ||
		    !at || line[at] != '/')
			continue;
		file = line + at;
		len = strcspn(file, "\n");
		file[len] = '\0';
		if (offset != 0 || len >= PATH_MAX || strstr(file, " (deleted)"))
			continue;
		for (size_t i = 0; i < *n && !seen; i++)
			seen = strcmp((*files)[i].path, file) == 0;
		if (seen)
			continue;
		if (*n == cap) {
			struct latch_remote_mapped *more =
			    realloc(*files, (cap = cap ? 2 * cap : 16) * sizeof(**files));

			if (!more) {
				fclose(f);
				return -ENOMEM;
			}
			*files = more;
		}
		memcpy((*files)[*n].path, file, len + 1);
		(*files)[(*n)++].start = start;
	}
	fclose(f);
	/* A process we may not read gives an empty file. */
	return *n ? 0 : (access(path, R_OK) == 0 && kill(pid, 0) == 0 ? -EPERM : -ESRCH);
}

/* Is @path's file name liblatch's? */
bool latch_remote_is_liblatch_(const char *path)
{
	const char *base = strrchr(path, '/');

	return strncmp(base ? base + 1 : path, "liblatch", 8) == 0;
}
