package dev.fencing.it.ctw;

import dev.fencing.it.weaving.WeavingContract;

/** The weaving contract over fixtures woven by ajc at build time. */
class CompileTimeWeavingTest extends WeavingContract {
}
