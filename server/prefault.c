/* The memory a worker's job will use, faulted in while its process waits for the job (server/prefault.py).

   A job's process is forked fresh for each job, so every page its compile touches is a new one: the kernel
   zeroes and maps it on first touch (gated delta rule's lowering: ~130 k faults, 0.3 s of its ~2 s; Kimi's
   block attention ~170 k, 0.4-0.5 s). The process is forked ahead of its job and waits; here it maps and
   touches that memory in the wait instead, for the two allocators a compile uses:

   - pymalloc's arenas (objects up to 512 bytes): `reserve` maps one region and installs an arena allocator
     (`PyObject_SetArenaAllocator`) that hands out arenas from it, keeping those freed for reuse, and passes any
     other request (and the arenas made before it) to the allocator it replaced; `populate` faults in the
     region's next bytes, the GIL released;
   - glibc's heap (bigger objects: dict and set tables, lists): `heap_grow` takes 8 MiB blocks from malloc and
     touches them, `heap_release` frees them all, after `mallopt` told glibc to keep what is freed (no trim,
     no separate mapping below 32 MiB, one arena for every thread): the job's mallocs then reuse those pages.

   `demand` says what the job asked of both, for the next job's process to fault in that much: the arenas handed
   out (freed ones are handed out again first, so that is their high-water mark) and the most bytes of the heap
   in use at the moments it was asked (`watch` starts the count, `demand` samples glibc's figure: a walk of its
   free lists, so it is asked where a job holds the most, its interim answer, not on a timer). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#define ALIGN ((size_t)2 << 20)  /* the region starts on a huge-page boundary: every arena pool-aligned */
#define HEAP_BLOCK ((size_t)8 << 20)
#define MAX_BLOCKS 1024  /* 8 GiB of heap blocks at most */

static PyObjectArenaAllocator previous;
static char *base = NULL, *bump = NULL, *top = NULL, *populated = NULL;
static void *free_arenas = NULL;  /* arenas of the region given back, linked through their first word */
static size_t arena_size = 0;     /* what pymalloc asks for (the first request says) */
static size_t elsewhere = 0;      /* bytes of arenas the replaced allocator gave (the region too small) */
static void *blocks[MAX_BLOCKS];
static int nblocks = 0;
static int tuned = 0;
static size_t heap_peak = 0;

static size_t heap_in_use(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    return mallinfo2().uordblks;
#else
    return 0;
#endif
}

static void *arena_alloc(void *ctx, size_t size) {
    (void)ctx;
    if (base != NULL && (arena_size == 0 || size == arena_size)) {
        arena_size = size;
        if (free_arenas != NULL) {
            void *p = free_arenas;
            free_arenas = *(void **)p;
            return p;
        }
        if ((size_t)(top - bump) >= size) {
            void *p = bump;
            bump += size;
            return p;
        }
    }
    void *p = previous.alloc(previous.ctx, size);
    if (p != NULL)
        elsewhere += size;
    return p;
}

static void arena_free(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    if (base != NULL && (char *)ptr >= base && (char *)ptr < top) {
        *(void **)ptr = free_arenas;
        free_arenas = ptr;
        return;
    }
    previous.free(previous.ctx, ptr, size);
}

static int installed = 0;

static PyObject *reserve(PyObject *self, PyObject *arg) {
    (void)self;
    Py_ssize_t n = PyLong_AsSsize_t(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (!installed) {  /* from now on every arena is counted (`demand`), and taken from the region when there is one */
        PyObject_GetArenaAllocator(&previous);
        PyObjectArenaAllocator mine = {NULL, arena_alloc, arena_free};
        PyObject_SetArenaAllocator(&mine);
        installed = 1;
    }
    if (base != NULL || n <= 0)
        Py_RETURN_FALSE;
    size_t want = ((size_t)n + ALIGN - 1) & ~(ALIGN - 1);
    char *p = mmap(NULL, want + ALIGN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        Py_RETURN_FALSE;  /* (the job's address-space cap, say): the job runs as it would have */
    char *start = (char *)(((uintptr_t)p + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1));
    if (start > p)
        munmap(p, (size_t)(start - p));
    char *end = start + want;
    if (end < p + want + ALIGN)
        munmap(end, (size_t)(p + want + ALIGN - end));
    base = bump = populated = start;
    top = end;
    Py_RETURN_TRUE;
}

static PyObject *populate(PyObject *self, PyObject *arg) {
    (void)self;
    Py_ssize_t n = PyLong_AsSsize_t(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (base != NULL && n > 0) {
        char *from = populated;
        char *to = (size_t)(top - from) > (size_t)n ? from + n : top;
        long page = sysconf(_SC_PAGESIZE);
        Py_BEGIN_ALLOW_THREADS
        for (volatile char *q = from; q < to; q += page)
            *q = 0;  /* a write: the page is the process's own from here (a read would map the shared zero page) */
        Py_END_ALLOW_THREADS
        populated = to;
    }
    return PyLong_FromSsize_t(base != NULL ? (Py_ssize_t)(top - populated) : 0);
}

static PyObject *heap_grow(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
#ifdef __GLIBC__
    if (!tuned) {
        mallopt(M_ARENA_MAX, 1);
        mallopt(M_MMAP_THRESHOLD, 32 << 20);
        mallopt(M_TRIM_THRESHOLD, INT32_MAX);
        tuned = 1;
    }
    if (nblocks < MAX_BLOCKS) {
        char *p = malloc(HEAP_BLOCK);
        if (p != NULL) {
            long page = sysconf(_SC_PAGESIZE);
            Py_BEGIN_ALLOW_THREADS
            for (volatile char *q = p; q < p + HEAP_BLOCK; q += page)
                *q = 0;
            Py_END_ALLOW_THREADS
            blocks[nblocks++] = p;
            Py_RETURN_TRUE;
        }
    }
#endif
    Py_RETURN_FALSE;
}

static PyObject *heap_release(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    while (nblocks > 0)
        free(blocks[--nblocks]);
    Py_RETURN_NONE;
}

static PyObject *watch(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    heap_peak = heap_in_use();
    return PyLong_FromSsize_t((Py_ssize_t)heap_peak);
}

static PyObject *demand(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    size_t now = heap_in_use();
    if (now > heap_peak)
        heap_peak = now;
    size_t arenas = (base != NULL ? (size_t)(bump - base) : 0) + elsewhere;
    return Py_BuildValue("(nn)", (Py_ssize_t)arenas, (Py_ssize_t)heap_peak);
}

static PyMethodDef methods[] = {
    {"reserve", reserve, METH_O, "reserve(n): count pymalloc's arenas from now on, and hand them out of n bytes "
                                 "mapped here (True: mapped)"},
    {"populate", populate, METH_O, "populate(n): fault in the region's next n bytes; the bytes left to do"},
    {"heap_grow", heap_grow, METH_NOARGS, "take and touch one 8 MiB block of malloc's heap (False: not glibc)"},
    {"heap_release", heap_release, METH_NOARGS, "free the blocks heap_grow took (glibc keeps their pages)"},
    {"watch", watch, METH_NOARGS, "start counting the heap's most bytes in use from now; the bytes in use now"},
    {"demand", demand, METH_NOARGS, "(bytes of arenas handed out, the most heap bytes in use when asked since watch)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_prefault", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__prefault(void) { return PyModule_Create(&module); }
