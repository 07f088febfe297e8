/*
 * LZAV decoder (stream formats 3 and 2) as a CPython extension: decode(src: bytes, raw_length: int, dry: bool) -> bytes.
 *
 * A port of the TypeScript decoder (packages/core/src/codecs/lzav/decode-v3.ts, decode-v2.ts) with the same acceptance
 * rules and error texts; _pure.py is the same in Python. Errors are raised as ValueError(text); the Python wrapper
 * (vlink_bag.lzav) turns them into LzavError (CORRUPT_DATA). Built at install when a C compiler is available
 * (setup.py marks it optional); without it the pure-Python decoder is used.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static const char *copy_match(uint8_t *out, size_t op, size_t dist, size_t len) {
  uint8_t *d = out + op;
  const uint8_t *s = out + op - dist;
  if (dist >= len) {
    memcpy(d, s, len);
  } else if (dist == 1) {
    memset(d, s[0], len);
  } else {
    size_t done = 0;
    while (done < len) {
      size_t step = done + dist < len - done ? done + dist : len - done;
      memcpy(d + done, s, step);
      done += step;
    }
  }
  return NULL;
}

/* Reads the base-128 extension of a length field: at most 5 bytes. The callers' bounds leave room for it. */
static size_t long_length(const uint8_t *src, size_t *ip) {
  uint8_t b = src[(*ip)++];
  size_t len = b & 0x7f;
  if (b & 0x80) {
    size_t scale = 128;
    for (int n = 0; n < 4; n++) {
      uint8_t c = src[(*ip)++];
      len += (size_t)(c & 0x7f) * scale;
      if ((c & 0x80) == 0) break;
      scale *= 128;
    }
  }
  return len;
}

static const char *decode_v3(const uint8_t *src, size_t src_len, uint8_t *out, size_t dst_len, int dry,
                             char *msg, size_t msg_size) {
  if (src_len < 11) return "stream too short";
  int mref_minus1 = (src[0] & 15) - 1;
  if (mref_minus1 < 0 || mref_minus1 > 5) return "invalid minimum match length";
  size_t header_end = src_len - 9;
  /* ref_limit = dst_len - 8 may be negative: compare as signed 64-bit. */
  int64_t ref_limit = (int64_t)dst_len - 8;
  size_t ip = 1, op = 0;
  uint32_t carry = 0;
  unsigned carry_shift = 0;
  while (ip < header_end) {
    unsigned bh = src[ip++];
    if ((bh & 0x30) == 0) {
      carry |= (uint32_t)(bh >> 6) << carry_shift;
      carry_shift += 2;
      size_t len = bh & 15;
      if (len == 0) len = long_length(src, &ip) + 16;
      if (len > dst_len - op) return "literals overrun the output";
      if (len > src_len - ip) return "literals overrun the input";
      if (!dry) memcpy(out + op, src + ip, len);
      op += len;
      ip += len;
      if (ip >= header_end) break;
      bh = src[ip++];
    }
    unsigned type = (bh >> 4) & 3;
    uint32_t offset = 0, next_carry = 0;
    unsigned next_shift = 0;
    if (type == 1) {
      offset = ((uint32_t)src[ip] << 2) | (bh >> 6);
    } else if (type == 2) {
      uint32_t b1 = src[ip + 1];
      offset = ((b1 & 0x1f) << 10) | ((uint32_t)src[ip] << 2) | (bh >> 6);
      next_carry = b1 >> 5;
      next_shift = 3;
    } else if (type == 3) {
      uint32_t b2 = src[ip + 2];
      offset = ((b2 & 7) << 18) | ((uint32_t)src[ip + 1] << 10) | ((uint32_t)src[ip] << 2) | (bh >> 6);
      next_carry = b2 >> 3;
      next_shift = 5;
    }
    uint64_t dist = ((uint64_t)offset << carry_shift) | carry;
    carry = next_carry;
    carry_shift = next_shift;
    ip += type;
    size_t len = bh & 15;
    if (len == 0) len = long_length(src, &ip) + 16;
    len += (size_t)mref_minus1;
    if (dist < 8 || dist > op) return "reference offset out of range";
    if ((int64_t)len > ref_limit - (int64_t)op) return "reference overruns the output";
    if (!dry) copy_match(out, op, (size_t)dist, len);
    op += len;
  }
  if (op != dst_len) {
    snprintf(msg, msg_size, "decoded %zu bytes, expected %zu", op, dst_len);
    return msg;
  }
  return NULL;
}

static const char *decode_v2(const uint8_t *src, size_t src_len, uint8_t *out, size_t dst_len, int dry,
                             char *msg, size_t msg_size) {
  if (src_len < 8) return "stream too short";
  int mref_minus1 = (src[0] & 15) - 1;
  if (mref_minus1 < 0 || mref_minus1 > 5) return "invalid minimum match length";
  size_t header_end = src_len - 6;
  size_t ip = 1, op = 0;
  uint64_t carry = 0;
  unsigned carry_shift = 0;
  while (ip < header_end) {
    unsigned bh = src[ip++];
    if ((bh & 0x30) == 0) {
      carry |= (uint64_t)(bh >> 6) << carry_shift;
      carry_shift += 2;
      size_t len = bh & 15;
      if (len == 0) len = long_length(src, &ip) + 16;
      if (len > dst_len - op) return "literals overrun the output";
      if (len > src_len - ip) return "literals overrun the input";
      if (!dry) memcpy(out + op, src + ip, len);
      op += len;
      ip += len;
      if (ip >= header_end) break;
      bh = src[ip++];
    }
    unsigned type = (bh >> 4) & 3;
    uint32_t raw = 0;
    if (type >= 1) raw = src[ip];
    if (type >= 2) raw |= (uint32_t)src[ip + 1] << 8;
    if (type == 3) raw |= (uint32_t)src[ip + 2] << 16;
    uint64_t dist = ((uint64_t)(((raw << 2) | (bh >> 6)) & 0x7fffff) << carry_shift) | carry;
    carry = raw >> 21;
    carry_shift = type == 3 ? 3 : 0;
    ip += type;
    size_t len = bh & 15;
    if (len == 0) {
      unsigned b = src[ip++];
      len = 16 + b;
      if (b == 255) len += src[ip++];
    }
    len += (size_t)mref_minus1;
    if (dist > op) return "reference offset out of range";
    if (len > dist) return "overlapping reference in a format-2 stream";
    if (len > dst_len - op) return "reference overruns the output";
    if (!dry) copy_match(out, op, (size_t)dist, len);
    op += len;
  }
  if (op != dst_len) {
    snprintf(msg, msg_size, "decoded %zu bytes, expected %zu", op, dst_len);
    return msg;
  }
  return NULL;
}

static PyObject *lzav_decode(PyObject *self, PyObject *args) {
  Py_buffer src;
  Py_ssize_t raw_length;
  int dry = 0;
  (void)self;
  if (!PyArg_ParseTuple(args, "y*n|p", &src, &raw_length, &dry)) return NULL;
  if (raw_length < 0 || src.len < 1) {
    PyBuffer_Release(&src);
    PyErr_SetString(PyExc_ValueError, "bad arguments");
    return NULL;
  }
  const uint8_t *s = (const uint8_t *)src.buf;
  int format = s[0] >> 4;
  PyObject *result = NULL;
  uint8_t *out = NULL;
  if (!dry) {
    result = PyBytes_FromStringAndSize(NULL, raw_length);
    if (result == NULL) {
      PyBuffer_Release(&src);
      return NULL;
    }
    out = (uint8_t *)PyBytes_AS_STRING(result);
  }
  char msg[96];
  const char *error;
  Py_BEGIN_ALLOW_THREADS
  if (format == 3)
    error = decode_v3(s, (size_t)src.len, out, (size_t)raw_length, dry, msg, sizeof msg);
  else if (format == 2)
    error = decode_v2(s, (size_t)src.len, out, (size_t)raw_length, dry, msg, sizeof msg);
  else
    error = "unsupported stream format";
  Py_END_ALLOW_THREADS
  PyBuffer_Release(&src);
  if (error != NULL) {
    Py_XDECREF(result);
    PyErr_SetString(PyExc_ValueError, error);
    return NULL;
  }
  if (dry) Py_RETURN_NONE;
  return result;
}

/*
 * split_frames(body) -> (payloads: list[bytes], timestamps: bytes (int64 LE per frame), kinds: bytes (int32 per frame),
 * headers: list[bytes]): the server's binary frame layout (vlink_bag/frames.py) cut in one pass. `headers` holds each
 * distinct header tail (from `action` to the end of `ser`) once, in first-seen order; `kinds` indexes it. The
 * DataFrame path of the remote reader uses it instead of a Python loop; frames.frames_to_columns is the fallback and
 * the reference (the tests compare both). Errors are ValueError(text).
 */
#define MAX_KINDS 4096
static PyObject *split_frames(PyObject *self, PyObject *args) {
  Py_buffer buf;
  (void)self;
  if (!PyArg_ParseTuple(args, "y*", &buf)) return NULL;
  const uint8_t *b = (const uint8_t *)buf.buf;
  size_t n = (size_t)buf.len, pos = 0, count = 0;
  const char *error = NULL;
  while (pos < n) {
    if (n - pos < 20) { error = "the stream ended inside a frame header"; break; }
    uint32_t hl = (uint32_t)b[pos] | (uint32_t)b[pos + 1] << 8 | (uint32_t)b[pos + 2] << 16 | (uint32_t)b[pos + 3] << 24;
    uint32_t pl = (uint32_t)b[pos + 4] | (uint32_t)b[pos + 5] << 8 | (uint32_t)b[pos + 6] << 16 | (uint32_t)b[pos + 7] << 24;
    if (hl < 14) { error = "frame header too short"; break; }
    uint64_t end = (uint64_t)pos + 8 + hl + pl;
    if (end > n) { error = "the stream ended inside a frame"; break; }
    pos = (size_t)end;
    count++;
  }
  if (error) {
    PyBuffer_Release(&buf);
    PyErr_SetString(PyExc_ValueError, error);
    return NULL;
  }
  PyObject *payloads = PyList_New((Py_ssize_t)count);
  PyObject *times = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(count * 8));
  PyObject *kinds = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(count * 4));
  PyObject *headers = PyList_New(0);
  size_t starts[MAX_KINDS], lens[MAX_KINDS], nkinds = 0, last = 0;
  if (!payloads || !times || !kinds || !headers) goto fail;
  int64_t *t = (int64_t *)PyBytes_AS_STRING(times);
  int32_t *k = (int32_t *)PyBytes_AS_STRING(kinds);
  pos = 0;
  for (size_t i = 0; i < count; i++) {
    uint32_t hl = (uint32_t)b[pos] | (uint32_t)b[pos + 1] << 8 | (uint32_t)b[pos + 2] << 16 | (uint32_t)b[pos + 3] << 24;
    uint32_t pl = (uint32_t)b[pos + 4] | (uint32_t)b[pos + 5] << 8 | (uint32_t)b[pos + 6] << 16 | (uint32_t)b[pos + 7] << 24;
    int64_t ts;
    memcpy(&ts, b + pos + 8, 8); /* little-endian hosts (x86, arm): the layout's byte order */
    t[i] = ts;
    size_t hstart = pos + 16, hlen = (size_t)hl - 8, found = nkinds;
    if (nkinds > 0 && lens[last] == hlen && memcmp(b + starts[last], b + hstart, hlen) == 0) {
      found = last;
    } else {
      for (size_t j = 0; j < nkinds; j++)
        if (lens[j] == hlen && memcmp(b + starts[j], b + hstart, hlen) == 0) { found = j; break; }
    }
    if (found == nkinds) {
      if (nkinds == MAX_KINDS) { PyErr_SetString(PyExc_ValueError, "more than 4096 distinct url/type pairs"); goto fail; }
      PyObject *h = PyBytes_FromStringAndSize((const char *)b + hstart, (Py_ssize_t)hlen);
      if (!h || PyList_Append(headers, h) < 0) { Py_XDECREF(h); goto fail; }
      Py_DECREF(h);
      starts[nkinds] = hstart;
      lens[nkinds] = hlen;
      nkinds++;
    }
    last = found;
    k[i] = (int32_t)found;
    size_t body = pos + 8 + hl;
    PyObject *p = PyBytes_FromStringAndSize((const char *)b + body, (Py_ssize_t)pl);
    if (!p) goto fail;
    PyList_SET_ITEM(payloads, (Py_ssize_t)i, p);
    pos = body + pl;
  }
  PyBuffer_Release(&buf);
  return Py_BuildValue("(NNNN)", payloads, times, kinds, headers);
fail:
  PyBuffer_Release(&buf);
  Py_XDECREF(payloads);
  Py_XDECREF(times);
  Py_XDECREF(kinds);
  Py_XDECREF(headers);
  return NULL;
}

static PyMethodDef methods[] = {
    {"decode", lzav_decode, METH_VARARGS, "decode(src, raw_length, dry=False) -> bytes: an LZAV format 3 or 2 stream."},
    {"split_frames", split_frames, METH_VARARGS, "split_frames(body) -> (payloads, timestamps, kinds, headers)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_lzav_c", "LZAV decoder and binary frame splitter (C).", -1, methods};

PyMODINIT_FUNC PyInit__lzav_c(void) { return PyModule_Create(&module); }
