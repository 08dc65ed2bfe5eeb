// The extension module of tests/build/python_probe: importing it and calling answer() proves
// it was built for the interpreter that imports it.
#include <pybind11/pybind11.h>

PYBIND11_MODULE(partita_probe, m) {
  m.def("answer", [] { return 42; });
}
