# cmake -DIN=FILE -DOUT=FILE.c -DNAME=SYMBOL -P embed.cmake: FILE's bytes as a NUL-terminated C
# array SYMBOL (the profile's HTML page is built into the library this way: no file to install
# or find at run time).
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR bytes "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){24})" "\\1\n  " body "${body}")
get_filename_component(name "${IN}" NAME)
file(WRITE "${OUT}.tmp"
  "/* Generated from ${name} by cmake/embed.cmake: do not edit. */\n"
  "extern const char ${NAME}[];\n"
  "const char ${NAME}[${bytes} + 1] = {\n  ${body}0};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
