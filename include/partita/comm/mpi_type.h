#pragma once
// Maps C++ arithmetic types to MPI datatypes (KaMinPar style): mpi_type<int64_t>() is
// MPI_LONG on LP64. Specialized on the builtin types so every fixed-width alias resolves;
// an unsupported type fails to compile.
#include <mpi.h>

#include <type_traits>

namespace partita {

template <class T>
struct MpiType {
  static_assert(sizeof(T) == 0, "partita::MpiType: no MPI datatype for this type");
};

#define PARTITA_MPI_TYPE(T, M)              \
  template <>                               \
  struct MpiType<T> {                       \
    static MPI_Datatype get() { return M; } \
  }
PARTITA_MPI_TYPE(char, MPI_CHAR);
PARTITA_MPI_TYPE(signed char, MPI_SIGNED_CHAR);
PARTITA_MPI_TYPE(unsigned char, MPI_UNSIGNED_CHAR);
PARTITA_MPI_TYPE(short, MPI_SHORT);
PARTITA_MPI_TYPE(unsigned short, MPI_UNSIGNED_SHORT);
PARTITA_MPI_TYPE(int, MPI_INT);
PARTITA_MPI_TYPE(unsigned int, MPI_UNSIGNED);
PARTITA_MPI_TYPE(long, MPI_LONG);
PARTITA_MPI_TYPE(unsigned long, MPI_UNSIGNED_LONG);
PARTITA_MPI_TYPE(long long, MPI_LONG_LONG);
PARTITA_MPI_TYPE(unsigned long long, MPI_UNSIGNED_LONG_LONG);
PARTITA_MPI_TYPE(float, MPI_FLOAT);
PARTITA_MPI_TYPE(double, MPI_DOUBLE);
PARTITA_MPI_TYPE(bool, MPI_C_BOOL);
#undef PARTITA_MPI_TYPE

template <class T>
MPI_Datatype mpi_type() {
  return MpiType<std::remove_cv_t<T>>::get();
}

}  // namespace partita
