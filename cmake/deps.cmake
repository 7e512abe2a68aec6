# Finds cJSON, xxHash and (for tests) cmocka: through pkg-config when it is there, else by
# header and library search under CMAKE_PREFIX_PATH (the GPU machine unpacks .deb files into a
# prefix and may have no pkg-config). Either way the targets are PkgConfig::<NAME>.
find_package(PkgConfig QUIET)

function(gpujit_find_dep name pcname header lib)
  if(TARGET PkgConfig::${name})
    return()
  endif()
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(${name} QUIET IMPORTED_TARGET GLOBAL ${pcname})
    if(TARGET PkgConfig::${name})
      return()
    endif()
  endif()
  find_path(${name}_INCLUDE ${header})
  find_library(${name}_LIBRARY ${lib})
  if(NOT ${name}_INCLUDE OR NOT ${name}_LIBRARY)
    message(FATAL_ERROR "${pcname} not found: install its -dev package or set CMAKE_PREFIX_PATH")
  endif()
  add_library(PkgConfig::${name} UNKNOWN IMPORTED GLOBAL)
  set_target_properties(PkgConfig::${name} PROPERTIES IMPORTED_LOCATION ${${name}_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${${name}_INCLUDE})
endfunction()
