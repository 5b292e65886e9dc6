package dev.fencing.spring.support;

import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The startup check of the resource names that checking {@code @Fenced} methods use, taken together: names that
 * look like one resource but are several, so that calls holding each can write the same data at once. One name
 * checked both without a key and with one ({@code orders} and {@code orders:<key>}); names that differ in letter
 * case only ({@code Orders}, {@code orders}); an unkeyed name inside a keyed one's space ({@code orders:eu} next to
 * keyed {@code orders}).
 */
final class ResourceNames {

    private ResourceNames() {
    }

    /**
     * Adds a problem to {@code problems} for each overlap.
     *
     * @param unkeyed the methods that check each resource without a key (acquiring methods check nothing)
     * @param keyed   the methods that check each resource with a key
     */
    static void overlaps(Map<String, Set<String>> unkeyed, Map<String, Set<String>> keyed, Set<String> problems) {
        unkeyed.forEach((resource, methods) -> {
            Set<String> withKey = keyed.get(resource);
            if (withKey != null) {
                problems.add(mixedKeys(resource, methods, withKey));
            }
            keyed.forEach((keyedResource, keyedMethods) -> {
                if (resource.startsWith(keyedResource + ":")) {
                    problems.add(inKeyedSpace(resource, methods, keyedResource, keyedMethods));
                }
            });
        });
        Map<String, Map<String, Set<String>>> byFoldedCase = new TreeMap<>();
        for (Map<String, Set<String>> kind : java.util.List.of(unkeyed, keyed)) {
            kind.forEach((resource, methods) -> byFoldedCase
                    .computeIfAbsent(resource.toLowerCase(Locale.ROOT), r -> new TreeMap<>())
                    .computeIfAbsent(resource, r -> new TreeSet<>()).addAll(methods));
        }
        byFoldedCase.values().forEach(names -> {
            if (names.size() > 1) {
                problems.add(caseOnly(names));
            }
        });
    }

    private static String mixedKeys(String resource, Set<String> unkeyed, Set<String> keyed) {
        return "resource '" + resource + "' is checked without a key by " + String.join(", ", unkeyed)
                + " and with a key by " + String.join(", ", keyed) + " (@Fenced on the method, its class or an "
                + "interface): '" + resource + "' and '" + resource + ":<key>' are separate resources, each with "
                + "its own lock and max_seen, so a call holding one is neither excluded nor fenced out by a call "
                + "holding the other, and both can write the same data at once; check the resource one way in "
                + "every method (all keyed: a lock per entity; or all unkeyed: one lock for all of it). A method "
                + "that writes many entities can hold an unkeyed lock that checks nothing (acquire = true) and call "
                + "a keyed method per entity. Only when the unkeyed method writes data no keyed method writes (a "
                + "summary row, say) give it a resource of its own, named after that data (resource = \""
                + resource + "-totals\")";
    }

    private static String inKeyedSpace(String resource, Set<String> unkeyed, String keyedResource,
                                       Set<String> keyed) {
        return "resource '" + resource + "', checked without a key by " + String.join(", ", unkeyed)
                + ", lies inside the keys of resource '" + keyedResource + "', checked with a key by "
                + String.join(", ", keyed) + ": '" + resource + "' is one resource of its own (its lock and "
                + "max_seen), while the keyed calls check '" + keyedResource + ":<key>', so calls of each can write "
                + "the same data at once (and a key whose text is '" + resource.substring(keyedResource.length() + 1)
                + "' would share its lock by accident); key the unkeyed method too, or name its resource apart "
                + "(without the '" + keyedResource + ":' prefix)";
    }

    private static String caseOnly(Map<String, Set<String>> names) {
        StringBuilder text = new StringBuilder("resources ");
        String separator = "";
        for (Map.Entry<String, Set<String>> name : names.entrySet()) {
            text.append(separator).append('\'').append(name.getKey()).append("' (")
                    .append(String.join(", ", name.getValue())).append(')');
            separator = " and ";
        }
        return text.append(" differ in letter case only: resource names are compared exactly, so these are "
                + "separate resources, each with its own lock and max_seen, and calls of each can write the same "
                + "data at once; spell the resource the same way everywhere, or name them apart").toString();
    }
}
