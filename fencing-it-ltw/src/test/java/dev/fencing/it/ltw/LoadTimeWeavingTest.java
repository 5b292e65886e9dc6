package dev.fencing.it.ltw;

import dev.fencing.it.weaving.WeavingContract;

/** The weaving contract over the same fixtures, woven by the AspectJ agent as they load. */
class LoadTimeWeavingTest extends WeavingContract {
}
