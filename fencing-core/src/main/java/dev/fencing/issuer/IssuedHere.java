package dev.fencing.issuer;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The highest token an issuer handed out per resource, for the {@value #REMEMBERED_RESOURCES} resources locked most
 * recently (least recently locked forgotten first): what {@link AbstractTokenIssuer} compares every new token with.
 */
final class IssuedHere {

    /** How many resources are remembered. */
    static final int REMEMBERED_RESOURCES = 10_000;

    private final Map<String, Long> highest = Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
            return size() > REMEMBERED_RESOURCES;
        }
    });

    /** The highest token handed out for {@code resource}, 0 when none is remembered. */
    long highest(String resource) {
        Long token = highest.get(resource);
        return token == null ? 0 : token;
    }

    /** Remembers that {@code token} was handed out for {@code resource}. */
    void issued(String resource, long token) {
        highest.merge(resource, token, Math::max);
    }
}
