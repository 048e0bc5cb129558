// Code generation exactly as llc does it, for llm-compiler's in-process engine.
//
// The LLVM-C emitter (LLVMTargetMachineEmitToMemoryBuffer) differs from llc in two
// ways that change the object file: it runs code generation without the target's
// library information (llc adds TargetLibraryInfoWrapperPass for the module's
// triple, which decides e.g. memcmp/bcmp expansion), and its target options put
// static constructors in .ctors instead of .init_array (llc: !-use-ctors). This
// file adds the two missing pieces and nothing else; it is compiled once per LLVM
// version against that LLVM's headers and loaded next to libLLVM.
#include <cstdlib>
#include <cstring>

#include "llvm-c/TargetMachine.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

using namespace llvm;

extern "C" int llmc_emit(LLVMTargetMachineRef machine, LLVMModuleRef module, int assembly, char **data,
                         size_t *size) {
  TargetMachine *target = reinterpret_cast<TargetMachine *>(machine);
  Module *m = reinterpret_cast<Module *>(module);
  target->Options.UseInitArray = true;
  legacy::PassManager passes;
  TargetLibraryInfoImpl library(Triple(m->getTargetTriple()));
  passes.add(new TargetLibraryInfoWrapperPass(library));
  SmallString<0> buffer;
  raw_svector_ostream stream(buffer);
  CodeGenFileType kind = assembly ? CodeGenFileType::AssemblyFile : CodeGenFileType::ObjectFile;
  if (target->addPassesToEmitFile(passes, stream, nullptr, kind))
    return 1;
  passes.run(*m);
  *size = buffer.size();
  *data = static_cast<char *>(std::malloc(buffer.size() ? buffer.size() : 1));
  std::memcpy(*data, buffer.data(), buffer.size());
  return 0;
}

extern "C" void llmc_free(char *data) { std::free(data); }
