package dev.fencing.recovery;

/**
 * What a {@link FloorRaise} did: how many resources it examined and how many it raised, the explicit floor given (0
 * for none), and who asked.
 */
public record FloorRaiseResult(long examined, long raised, long atLeast, String actor) {
}
