package dev.fencing.retention;

/**
 * The family of an effective resource: the text before its last {@code ':'} ({@code accounts:42} is of family
 * {@code accounts}, {@code orders:eu:7} of {@code orders:eu}). A store that compacts folds the fence state of a
 * family's idle resources into the family's floor, and judges a resource of the family that has no state of its own
 * against that floor. A resource without {@code ':'} (an unkeyed {@code @Fenced}) has no family and is never
 * compacted. Every store and issuer derives families with this one function, so they always agree.
 */
public final class ResourceFamily {

    private ResourceFamily() {
    }

    /** The family of {@code resource}, or {@code null} when it has none (no {@code ':'}, or nothing before it). */
    public static String of(String resource) {
        int colon = resource.lastIndexOf(':');
        return colon <= 0 ? null : resource.substring(0, colon);
    }

    /** Whether {@code resource} has a family ({@link #of(String)} is not {@code null}), without building it. */
    public static boolean has(String resource) {
        return resource.lastIndexOf(':') > 0;
    }
}
