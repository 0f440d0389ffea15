# Fails when packaging/meshplan-cli.1 does not describe every command and option of the CLI's usage.
# Usage: cmake -DCLI=path/to/meshplan-cli -DMANPAGE=packaging/meshplan-cli.1 -P checkmanpage.cmake
# A command must have its own `.SS COMMAND` subsection; an option (--json) must appear anywhere.
execute_process(COMMAND "${CLI}" --help OUTPUT_VARIABLE usage RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR usage STREQUAL "")
    message(FATAL_ERROR "${CLI} --help failed (${rc})")
endif()
file(READ "${MANPAGE}" man)

# troff to plain words: drop font changes (\fB, \f[B]), \- is a hyphen, \(aq a quote.
string(REGEX REPLACE "\\\\f(\\[[A-Z]*\\]|[A-Z])" "" text "${man}")
string(REPLACE "\\-" "-" text "${text}")
string(REPLACE "\\(aq" "'" text "${text}")
string(REPLACE "\n" " \n " text " ${text} ")

# Commands: the usage lines indented by exactly two spaces ("  hardware [ID] [--list] ...").
string(REPLACE "\n" ";" lines "${usage}")
set(commands)
foreach(line IN LISTS lines)
    if(line MATCHES "^  ([a-z][a-z-]*)( |$)")
        list(APPEND commands "${CMAKE_MATCH_1}")
    endif()
endforeach()
list(LENGTH commands count)
if(count LESS 5)
    message(FATAL_ERROR "found only ${count} commands in the usage text: has its layout changed?\n${usage}")
endif()

string(REGEX MATCHALL "--[a-z][a-z0-9-]*" options "${usage}")
list(REMOVE_DUPLICATES options)

set(missing)
foreach(command IN LISTS commands)
    if(NOT text MATCHES "\n \\.SS +\"?${command}\"? *\n")
        list(APPEND missing "command ${command} (no .SS ${command})")
    endif()
endforeach()
foreach(option IN LISTS options)
    if(NOT text MATCHES "[^a-z0-9-]${option}[^a-z0-9-]")
        list(APPEND missing "option ${option}")
    endif()
endforeach()
if(missing)
    list(JOIN missing "\n  " shown)
    message(FATAL_ERROR "${MANPAGE} lacks what `meshplan-cli --help` lists:\n  ${shown}")
endif()
message(STATUS "${MANPAGE}: all ${count} commands and their options are described")
