/* Argument conversion for a launch: each Python argument into the parameter a kernel's table
 * says (gpujit_py_params) — a device array (PyTorch, CuPy, __cuda_array_interface__, DLPack), a
 * raw address, a Python or NumPy number (into its C type, half and bfloat16 included), bytes for a
 * struct — and the launch's grid, block and stream. What an argument's type is, is cached. */
#include "ext.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* grid/block: an int or a tuple of 1 to 3 ints. */
int gpujit_py_dims(PyObject *o, unsigned out[3], const char *what)
{
  out[0] = out[1] = out[2] = 1;
  if (PyLong_Check(o)) {
    long v = PyLong_AsLong(o);
    if (v < 1 || v > 0x7fffffffL) {
      if (!PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "%s must be at least 1 (got %ld)", what, v);
      return -1;
    }
    out[0] = (unsigned)v;
    return 0;
  }
  if (PyTuple_Check(o) && PyTuple_Size(o) >= 1 && PyTuple_Size(o) <= 3) {
    for (Py_ssize_t i = 0; i < PyTuple_Size(o); i++) {
      PyObject *x = PyTuple_GetItem(o, i);
      long v = PyLong_Check(x) ? PyLong_AsLong(x) : -1;
      if (v < 1 || v > 0x7fffffffL) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s[%zd] must be an int of at least 1", what, i);
        return -1;
      }
      out[i] = (unsigned)v;
    }
    return 0;
  }
  PyErr_Format(PyExc_TypeError, "%s must be an int or a tuple of 1 to 3 ints", what);
  return -1;
}

/* Parameter i's description for messages: "parameter 3 (float32) of scale<float>". */
void gpujit_py_where(char *buf, size_t cap, const gpujit_py_params *k, int i)
{
  snprintf(buf, cap, "parameter %d (%s%s) of %s", i + 1, k->types[i] == GPUJIT_PARAM_UNKNOWN ? "" : gpujit_param_type_name(k->types[i]),
           k->types[i] == GPUJIT_PARAM_UNKNOWN ? "untyped" : "", k->name);
}

/* ---- what an argument is, cached per type ---------------------------------------------------- */

enum kind { K_NONE, K_TORCH, K_CUPY, K_CAI, K_DLPACK, K_NPSCALAR };

typedef struct {
  PyObject *type; /* strong reference: an address never names another type */
  enum kind kind;
  char np_kind;   /* NumPy scalars: 'b', 'i', 'u', 'f' */
  int itemsize;
} kind_entry;

static kind_entry kinds[64];
static int nkinds;
static PyObject *s_data_ptr, *s_get_device, *s_data, *s_ptr, *s_device_id, *s_cai, *s_dlpack, *s_dlpack_device,
    *s_dtype, *s_kind, *s_itemsize, *s_cuda_stream, *s_cuda_stream_proto, *s_tobytes;

static int has(PyObject *o, PyObject *name)
{
  int r = PyObject_HasAttr(o, name);
  PyErr_Clear();
  return r;
}

static const kind_entry *kind_of(PyObject *o)
{
  PyObject *type = (PyObject *)Py_TYPE(o);
  kind_entry e = {type, K_NONE, 0, 0};
  for (int i = 0; i < nkinds; i++)
    if (kinds[i].type == type)
      return &kinds[i];
  if (has(o, s_data_ptr) && has(o, s_get_device) && has(o, s_dlpack)) {
    e.kind = K_TORCH;
  } else if (has(o, s_cai)) {
    PyObject *data = PyObject_GetAttr(o, s_data);
    e.kind = data && has(data, s_ptr) && has(data, s_device_id) ? K_CUPY : K_CAI;
    Py_XDECREF(data);
    PyErr_Clear();
  } else if (has(o, s_dlpack) && has(o, s_dlpack_device)) {
    e.kind = K_DLPACK;
  } else if (has(o, s_dtype)) {
    PyObject *dt = PyObject_GetAttr(o, s_dtype), *k = dt ? PyObject_GetAttr(dt, s_kind) : NULL,
             *sz = dt ? PyObject_GetAttr(dt, s_itemsize) : NULL, *kb = k ? PyUnicode_AsUTF8String(k) : NULL;
    if (kb && sz && PyBytes_Size(kb) == 1 && strchr("biuf", PyBytes_AsString(kb)[0])) {
      e.kind = K_NPSCALAR;
      e.np_kind = PyBytes_AsString(kb)[0];
      e.itemsize = (int)PyLong_AsLong(sz);
    }
    Py_XDECREF(dt), Py_XDECREF(k), Py_XDECREF(sz), Py_XDECREF(kb);
    PyErr_Clear();
  }
  if (nkinds == (int)(sizeof(kinds) / sizeof(kinds[0]))) {
    static kind_entry spare; /* full: answer without keeping it */
    spare = e;
    return &spare;
  }
  Py_INCREF(type);
  kinds[nkinds] = e;
  return &kinds[nkinds++];
}

static uint64_t unsigned_of(PyObject *o)
{
  return (uint64_t)PyLong_AsUnsignedLongLong(o);
}

/* A DLPack capsule's data address; the capsule, unconsumed, frees itself. */
typedef struct {
  void *data;
  int32_t device_type, device_id;
  int32_t ndim;
  uint8_t code, bits;
  uint16_t lanes;
  int64_t *shape, *strides;
  uint64_t byte_offset;
} dl_tensor;

/* A device array's address and device; 1 when `o` is one, 0 when not, -1 with an exception. */
static int device_array(PyObject *o, const kind_entry *e, uint64_t *ptr, int *dev, const gpujit_py_params *k, int i)
{
  PyObject *v = NULL, *w = NULL;
  char at[400];
  int rc = 1;
#define AT (gpujit_py_where(at, sizeof(at), k, i), at)
  switch (e->kind) {
  case K_TORCH:
    if (!(v = PyObject_CallMethodObjArgs(o, s_get_device, NULL)))
      return -1;
    *dev = (int)PyLong_AsLong(v);
    Py_DECREF(v);
    if (*dev < 0) {
      PyErr_Format(PyExc_ValueError, "%s: the tensor is on the CPU; move it to the GPU (.cuda())", AT);
      return -1;
    }
    if (!(v = PyObject_CallMethodObjArgs(o, s_data_ptr, NULL)))
      return -1;
    *ptr = unsigned_of(v);
    break;
  case K_CUPY:
    if (!(w = PyObject_GetAttr(o, s_data)) || !(v = PyObject_GetAttr(w, s_ptr)))
      goto fail;
    *ptr = unsigned_of(v);
    Py_DECREF(v);
    if (!(v = PyObject_GetAttr(w, s_device_id)))
      goto fail;
    *dev = (int)PyLong_AsLong(v);
    break;
  case K_CAI: {
    PyObject *data;
    if (!(w = PyObject_GetAttr(o, s_cai)))
      return -1;
    data = PyDict_Check(w) ? PyDict_GetItemString(w, "data") : NULL; /* borrowed */
    if (!data || !PyTuple_Check(data) || PyTuple_Size(data) < 1) {
      PyErr_Format(PyExc_TypeError, "%s: __cuda_array_interface__ has no 'data' (address, read-only) pair", AT);
      goto fail;
    }
    *ptr = unsigned_of(PyTuple_GetItem(data, 0));
    if (!PyErr_Occurred() && *ptr && gpujit_pointer_device(dev, *ptr) < 0)
      gpujit_error_clear();
    break;
  }
  case K_DLPACK: {
    const dl_tensor *t;
    if (!(v = PyObject_CallMethodObjArgs(o, s_dlpack_device, NULL)))
      return -1;
    if (!PyTuple_Check(v) || PyTuple_Size(v) != 2) {
      PyErr_Format(PyExc_TypeError, "%s: __dlpack_device__() did not give (type, id)", AT);
      goto fail;
    }
    {
      long type = PyLong_AsLong(PyTuple_GetItem(v, 0));
      *dev = (int)PyLong_AsLong(PyTuple_GetItem(v, 1));
      if (type != 2 && type != 13) { /* kDLCUDA, kDLCUDAManaged */
        PyErr_Format(PyExc_ValueError, "%s: the array is not in GPU memory (DLPack device type %ld); copy it to the GPU",
                     AT, type);
        goto fail;
      }
    }
    Py_DECREF(v);
    if (!(v = PyObject_CallMethodObjArgs(o, s_dlpack, NULL)))
      return -1;
    if (!(t = PyCapsule_GetPointer(v, "dltensor")))
      goto fail;
    *ptr = (uint64_t)(uintptr_t)t->data + t->byte_offset;
    break;
  }
  default:
    rc = 0;
  }
  if (PyErr_Occurred())
    rc = -1;
  Py_XDECREF(v);
  Py_XDECREF(w);
  return rc;
fail:
  Py_XDECREF(v);
  Py_XDECREF(w);
  return -1;
#undef AT
}

/* IEEE half and bfloat16 from a double, rounding to nearest even. */
static uint16_t to_half(double d)
{
  float f = (float)d;
  uint32_t x;
  uint32_t sign, exp, mant;
  memcpy(&x, &f, 4);
  sign = (x >> 16) & 0x8000u;
  exp = (x >> 23) & 0xffu;
  mant = x & 0x7fffffu;
  if (exp == 0xff)
    return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp > 142) /* overflow */
    return (uint16_t)(sign | 0x7c00u);
  if (exp < 113) { /* subnormal or zero */
    uint32_t shift;
    if (exp < 102)
      return (uint16_t)sign;
    mant |= 0x800000u;
    shift = 126 - exp;
    {
      uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
      if (rem > half || (rem == half && (h & 1)))
        h++;
      return (uint16_t)(sign | h);
    }
  }
  {
    uint32_t h = ((exp - 112) << 10) | (mant >> 13), rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
      h++;
    return (uint16_t)(sign | h);
  }
}

static uint16_t to_bf16(double d)
{
  float f = (float)d;
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((x >> 16) | 0x40);
  x += 0x7fffu + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}

/* Store a number as parameter type t (sizes checked by the caller). */
static int store_number(void *slot, gpujit_param_type t, PyObject *o, int is_float, const char *at)
{
  if (t == GPUJIT_PARAM_BOOL) {
    int b = PyObject_IsTrue(o);
    uint8_t v = (uint8_t)(b > 0);
    if (b < 0)
      return -1;
    memcpy(slot, &v, 1);
    return 0;
  }
  if (t >= GPUJIT_PARAM_F16 && t <= GPUJIT_PARAM_F64) {
    double d = PyFloat_AsDouble(o);
    if (d == -1.0 && PyErr_Occurred())
      return -1;
    if (t == GPUJIT_PARAM_F64)
      memcpy(slot, &d, 8);
    else if (t == GPUJIT_PARAM_F32) {
      float f = (float)d;
      memcpy(slot, &f, 4);
    } else {
      uint16_t h = t == GPUJIT_PARAM_F16 ? to_half(d) : to_bf16(d);
      memcpy(slot, &h, 2);
    }
    return 0;
  }
  if (is_float) {
    PyErr_Format(PyExc_TypeError, "%s: a float for an integer parameter; pass an int", at);
    return -1;
  }
  {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    unsigned long long u = 0;
    static const long long lo[] = {0, 0, 0, -128, 0, -32768, 0, -2147483648LL, 0};
    static const unsigned long long hi[] = {0, 0, 1, 127, 255, 32767, 65535, 2147483647ULL, 4294967295ULL};
    if (v == -1 && PyErr_Occurred())
      return -1;
    if (overflow > 0 && t == GPUJIT_PARAM_U64) {
      u = PyLong_AsUnsignedLongLong(o);
      if (PyErr_Occurred())
        return -1;
      memcpy(slot, &u, 8);
      return 0;
    }
    if (overflow || (t == GPUJIT_PARAM_U64 && v < 0) || (t <= GPUJIT_PARAM_U32 && (v < lo[t] || (v > 0 && (unsigned long long)v > hi[t])))) {
      PyErr_Format(PyExc_OverflowError, "%s: value out of range", at);
      return -1;
    }
    switch (t) {
    case GPUJIT_PARAM_BOOL: case GPUJIT_PARAM_I8: case GPUJIT_PARAM_U8: {
      uint8_t b = (uint8_t)v;
      memcpy(slot, &b, 1);
      break;
    }
    case GPUJIT_PARAM_I16: case GPUJIT_PARAM_U16: {
      uint16_t s = (uint16_t)v;
      memcpy(slot, &s, 2);
      break;
    }
    case GPUJIT_PARAM_I32: case GPUJIT_PARAM_U32: {
      uint32_t w = (uint32_t)v;
      memcpy(slot, &w, 4);
      break;
    }
    default:
      memcpy(slot, &v, 8);
    }
  }
  return 0;
}

/* The parameter type a NumPy scalar is. */
static gpujit_param_type np_type(const kind_entry *e)
{
  switch (e->np_kind) {
  case 'b': return GPUJIT_PARAM_BOOL;
  case 'f': return e->itemsize == 2 ? GPUJIT_PARAM_F16 : e->itemsize == 4 ? GPUJIT_PARAM_F32 : e->itemsize == 8 ? GPUJIT_PARAM_F64 : GPUJIT_PARAM_RECORD;
  case 'i': return e->itemsize == 1 ? GPUJIT_PARAM_I8 : e->itemsize == 2 ? GPUJIT_PARAM_I16 : e->itemsize == 4 ? GPUJIT_PARAM_I32 : GPUJIT_PARAM_I64;
  default: return e->itemsize == 1 ? GPUJIT_PARAM_U8 : e->itemsize == 2 ? GPUJIT_PARAM_U16 : e->itemsize == 4 ? GPUJIT_PARAM_U32 : GPUJIT_PARAM_U64;
  }
}

/* Argument i into its slot. */
int gpujit_py_convert(const gpujit_py_params *k, int i, PyObject *o, void *slot, int *array_dev)
{
  gpujit_param_type t = k->types[i];
  int size = k->sizes[i], dev = -1, r;
  uint64_t ptr = 0;
  char at[400];
  const kind_entry *e;
  if (o == Py_None && (t == GPUJIT_PARAM_POINTER || (t == GPUJIT_PARAM_UNKNOWN && size == 8))) {
    memset(slot, 0, 8);
    return 0;
  }
  if (PyFloat_Check(o) || PyLong_Check(o)) { /* bool included */
    if (t == GPUJIT_PARAM_POINTER && PyLong_Check(o) && !PyBool_Check(o)) { /* a raw device address */
      ptr = PyLong_AsUnsignedLongLong(o);
      if (PyErr_Occurred())
        return -1;
      memcpy(slot, &ptr, 8);
      return 0;
    }
    gpujit_py_where(at, sizeof(at), k, i);
    if (t == GPUJIT_PARAM_UNKNOWN) {
      PyErr_Format(PyExc_TypeError,
                   "%s: the kernel is extern \"C\", so its %d-byte parameter could be an integer or a float: pass a NumPy "
                   "scalar (numpy.int32(...), numpy.float32(...)) or give module.kernel(name, signature=\"...\")",
                   at, size);
      return -1;
    }
    if (t == GPUJIT_PARAM_POINTER || t == GPUJIT_PARAM_RECORD) {
      PyErr_Format(PyExc_TypeError, "%s: a %s is no %s", at, PyFloat_Check(o) ? "float" : "Python number",
                   t == GPUJIT_PARAM_POINTER ? "device array (a float or bool for a pointer)" : "struct value: pass its bytes");
      return -1;
    }
    return store_number(slot, t, o, PyFloat_Check(o), at);
  }
  e = kind_of(o);
  if ((r = device_array(o, e, &ptr, &dev, k, i)) != 0) {
    if (r < 0)
      return -1;
    gpujit_py_where(at, sizeof(at), k, i);
    if (t != GPUJIT_PARAM_POINTER && !(t == GPUJIT_PARAM_UNKNOWN && size == 8)) {
      PyErr_Format(PyExc_TypeError, "%s: an array for a %s parameter", at, t == GPUJIT_PARAM_UNKNOWN ? "non-pointer" : gpujit_param_type_name(t));
      return -1;
    }
    *array_dev = dev;
    memcpy(slot, &ptr, 8);
    return 0;
  }
  gpujit_py_where(at, sizeof(at), k, i);
  if (e->kind == K_NPSCALAR) {
    gpujit_param_type st = np_type(e);
    if (t == GPUJIT_PARAM_UNKNOWN) {
      if (e->itemsize != size) {
        PyErr_Format(PyExc_TypeError, "%s: a %d-byte NumPy scalar for a %d-byte parameter", at, e->itemsize, size);
        return -1;
      }
      t = st;
    } else if (t == GPUJIT_PARAM_POINTER || t == GPUJIT_PARAM_RECORD) {
      PyErr_Format(PyExc_TypeError, "%s: a NumPy scalar for a %s parameter", at, gpujit_param_type_name(t));
      return -1;
    }
    return store_number(slot, t, o, e->np_kind == 'f', at);
  }
  if ((t == GPUJIT_PARAM_RECORD || t == GPUJIT_PARAM_UNKNOWN) && (PyBytes_Check(o) || has(o, s_tobytes))) {
    PyObject *b = PyBytes_Check(o) ? (Py_INCREF(o), o) : PyObject_CallMethodObjArgs(o, s_tobytes, NULL);
    if (!b)
      return -1;
    if (!PyBytes_Check(b) || PyBytes_Size(b) != size) {
      PyErr_Format(PyExc_TypeError, "%s: %zd bytes for a %d-byte parameter", at, PyBytes_Check(b) ? PyBytes_Size(b) : -1, size);
      Py_DECREF(b);
      return -1;
    }
    memcpy(slot, PyBytes_AsString(b), (size_t)size);
    Py_DECREF(b);
    return 0;
  }
  {
    PyObject *tn = PyObject_GetAttrString((PyObject *)Py_TYPE(o), "__name__");
    PyObject *tb = tn ? PyUnicode_AsUTF8String(tn) : NULL;
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "%s: cannot pass a %s: give a CuPy array, a PyTorch CUDA tensor, an object with "
                 "__cuda_array_interface__ or __dlpack__, an int address, a Python or NumPy number, or bytes",
                 at, tb ? PyBytes_AsString(tb) : "?");
    Py_XDECREF(tn), Py_XDECREF(tb);
  }
  return -1;
}

/* stream=: None (CUDA's legacy default stream), an int handle, a CuPy stream (.ptr), a PyTorch
 * stream (.cuda_stream) or any object with __cuda_stream__ (cuda.core). */
int gpujit_py_stream_of(PyObject *o, void **out)
{
  PyObject *v = NULL;
  uint64_t h;
  *out = GPUJIT_STREAM_LEGACY;
  if (!o || o == Py_None)
    return 0;
  if (PyLong_Check(o)) {
    v = o;
    Py_INCREF(v);
  } else if (has(o, s_ptr)) {
    v = PyObject_GetAttr(o, s_ptr);
  } else if (has(o, s_cuda_stream)) {
    v = PyObject_GetAttr(o, s_cuda_stream);
  } else if (has(o, s_cuda_stream_proto)) {
    PyObject *pair = PyObject_CallMethodObjArgs(o, s_cuda_stream_proto, NULL);
    if (pair && PyTuple_Check(pair) && PyTuple_Size(pair) == 2) {
      v = PyTuple_GetItem(pair, 1);
      Py_INCREF(v);
    }
    Py_XDECREF(pair);
  }
  if (!v || !PyLong_Check(v)) {
    Py_XDECREF(v);
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_TypeError, "stream must be None, an int handle, a CuPy or PyTorch stream, or an object with __cuda_stream__");
    return -1;
  }
  h = PyLong_AsUnsignedLongLong(v);
  Py_DECREF(v);
  if (PyErr_Occurred())
    return -1;
  *out = h ? (void *)(uintptr_t)h : GPUJIT_STREAM_LEGACY;
  return 0;
}

/* The attribute names argument conversion looks up, interned once. */
int gpujit_py_args_init(void)
{
  static const struct {
    PyObject **slot;
    const char *text;
  } names[] = {{&s_data_ptr, "data_ptr"},   {&s_get_device, "get_device"},
               {&s_data, "data"},           {&s_ptr, "ptr"},
               {&s_device_id, "device_id"}, {&s_cai, "__cuda_array_interface__"},
               {&s_dlpack, "__dlpack__"},   {&s_dlpack_device, "__dlpack_device__"},
               {&s_dtype, "dtype"},         {&s_kind, "kind"},
               {&s_itemsize, "itemsize"},   {&s_cuda_stream, "cuda_stream"},
               {&s_cuda_stream_proto, "__cuda_stream__"}, {&s_tobytes, "tobytes"}};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (!(*names[i].slot = PyUnicode_InternFromString(names[i].text)))
      return -1;
  return 0;
}
