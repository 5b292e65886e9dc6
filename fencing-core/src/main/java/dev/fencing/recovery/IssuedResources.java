package dev.fencing.recovery;

import java.util.List;

/**
 * An issuer that can list the resources it issued tokens for (the JDBC lease table's rows, the in-memory issuer's
 * counters). The floor raise after a restore walks them too, so a resource created after the backup, which the
 * restored fence table does not hold, is raised as well instead of accepting a zombie's first token.
 */
public interface IssuedResources {

    /**
     * Up to {@code limit} resources this issuer issued tokens for, in {@link String#compareTo} order of the issuer's
     * storage, after {@code after} ({@code null}: from the first).
     */
    List<String> issuedResources(String after, int limit);
}
