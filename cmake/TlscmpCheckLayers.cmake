# The layers of src/, from the bottom, held by the build: a folder includes
# only the folders below it, and the headers at src/'s top (the vocabulary)
# none; a folder above kinds/ includes no kind's own folder, only the table
# of kinds, and a folder above stacks/ no stack's own folder; inside kinds/,
# a kind includes no other kind's folder, and inside stacks/ a stack no
# other stack's. Run as a
# script (cmake -DSRC=... -DSTAMP=... -P) by the build, on every change to a
# source file under src/; a breach fails the build naming the line. docs/development.md says what each layer holds.
set(layers transport framing spec measure render tls stacks protocol session kinds results report app cli)

list(FIND layers kinds kinds_rank)
list(FIND layers stacks stacks_rank)
file(GLOB_RECURSE sources RELATIVE ${SRC} ${SRC}/*.hpp ${SRC}/*.cpp)
set(breaches "")
foreach(source IN LISTS sources)
  string(REGEX MATCH "^[^/]+/" folder "${source}")
  string(REPLACE "/" "" folder "${folder}")
  if(folder STREQUAL "" AND source MATCHES "\\.cpp$")
    continue()  # main.cpp: the executable, above every layer
  elseif(folder STREQUAL "")
    set(rank -1)  # the vocabulary's headers: below every layer
    set(folder "the vocabulary (src/*.hpp)")
  else()
    list(FIND layers ${folder} rank)
    if(rank EQUAL -1)
      continue()  # main.cpp's folder and tools/ sit above every layer
    endif()
  endif()
  file(STRINGS ${SRC}/${source} includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"[a-z_]+/")
  # Inside kinds/ and stacks/, the kinds and the stacks are peers: one
  # includes its own folder and the part they share (kinds/*.hpp,
  # stacks/*.hpp), never another's folder; the shared part includes none of
  # them, bar the table that lists them.
  set(own_peer "")
  if(folder STREQUAL "kinds" OR folder STREQUAL "stacks")
    string(REGEX MATCH "^${folder}/([a-z_]+)/" own_peer "${source}")
    set(own_peer "${CMAKE_MATCH_1}")
  endif()
  if(folder STREQUAL "kinds")
    set(peer "kind")
  else()
    set(peer "stack")
  endif()
  foreach(line IN LISTS includes)
    if((folder STREQUAL "kinds" OR folder STREQUAL "stacks") AND NOT source STREQUAL "${folder}/table.cpp"
       AND line MATCHES "\"${folder}/([a-z_]+)/" AND NOT CMAKE_MATCH_1 STREQUAL own_peer)
      string(STRIP "${line}" line)
      if(own_peer STREQUAL "")
        string(APPEND breaches "\n  src/${source}: ${line}: the ${peer}s' shared part reaches a ${peer} through the table (${folder}/*.hpp), not its folder")
      else()
        string(APPEND breaches "\n  src/${source}: ${line}: the ${own_peer} ${peer} includes another ${peer}'s folder; move what both need to the ${peer}s' shared part (src/${folder}/*.hpp)")
      endif()
      continue()
    endif()
    # Above stacks/, a stack is reached through the table (stacks/stack.hpp), never its folder.
    if(rank GREATER stacks_rank AND line MATCHES "\"stacks/[a-z_]+/")
      string(STRIP "${line}" line)
      string(APPEND breaches "\n  src/${source}: ${line}: ${folder}/ reaches a stack through the table of stacks (stacks/stack.hpp), not its folder")
      continue()
    endif()
    # Above kinds/, a kind is reached through the table (kinds/kind.hpp), never its folder.
    if(rank GREATER kinds_rank AND line MATCHES "\"kinds/[a-z_]+/")
      string(STRIP "${line}" line)
      string(APPEND breaches "\n  src/${source}: ${line}: ${folder}/ reaches a kind through the table of kinds (kinds/kind.hpp), not its folder")
      continue()
    endif()
    string(REGEX REPLACE "^[^\"]*\"([a-z_]+)/.*$" "\\1" target "${line}")
    list(FIND layers ${target} target_rank)
    if(target_rank GREATER rank)
      if(rank EQUAL -1)
        set(may "other vocabulary headers")
      else()
        list(SUBLIST layers 0 ${rank} below)
        list(PREPEND below "the vocabulary")
        list(JOIN below ", " may)
        string(APPEND folder "/")
      endif()
      string(STRIP "${line}" line)
      string(APPEND breaches "\n  src/${source}: ${line}: ${folder} may include only ${may}")
    endif()
  endforeach()
endforeach()
if(NOT breaches STREQUAL "")
  message(FATAL_ERROR "an include breaks the layers:${breaches}\n"
                      "Move what both need down to the lower layer, or pass it in from above.")
endif()
file(TOUCH ${STAMP})
