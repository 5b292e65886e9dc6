package dev.fencing.spring.support;

import java.text.Normalizer;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The startup check of the resource names that checking {@code @Fenced} methods use, taken together: names that
 * look like one resource but are several, so that calls holding each can write the same data at once. One name
 * checked both without a key and with one ({@code orders} and {@code orders:<key>}); names that differ in letter
 * case only ({@code Orders}, {@code orders}) or in how their characters are encoded (an accent composed, {@code é},
 * or decomposed, {@code e} and a combining accent, as macOS file names and some editors give it; a compatibility
 * form such as a full-width letter or a ligature: names equal under Unicode NFKC); an unkeyed name inside a keyed
 * one's space ({@code orders:eu} next to keyed {@code orders}). Names with leading or trailing whitespace or an
 * invisible character are refused one by one, by {@code FencePoint}, before this check.
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
        Map<String, Map<String, Set<String>>> byFolded = new TreeMap<>();
        for (Map<String, Set<String>> kind : java.util.List.of(unkeyed, keyed)) {
            kind.forEach((resource, methods) -> byFolded
                    .computeIfAbsent(folded(resource), r -> new TreeMap<>())
                    .computeIfAbsent(resource, r -> new TreeSet<>()).addAll(methods));
        }
        byFolded.values().forEach(names -> {
            if (names.size() > 1) {
                problems.add(lookAlike(names));
            }
        });
    }

    /**
     * What two names that look alike share: lower case, then Unicode NFKC (composed accents, compatibility forms
     * such as a full-width letter or a ligature written as the plain letters).
     */
    static String folded(String resource) {
        return Normalizer.normalize(resource.toLowerCase(Locale.ROOT), Normalizer.Form.NFKC);
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

    private static String lookAlike(Map<String, Set<String>> names) {
        boolean caseOnly = names.keySet().stream().map(name -> name.toLowerCase(Locale.ROOT)).distinct().count() == 1;
        StringBuilder text = new StringBuilder("resources ");
        String separator = "";
        for (Map.Entry<String, Set<String>> name : names.entrySet()) {
            text.append(separator).append('\'').append(name.getKey()).append('\'');
            if (!caseOnly) { // the spellings look the same: show what tells them apart
                text.append(" (written \"").append(escaped(name.getKey())).append("\")");
            }
            text.append(" (").append(String.join(", ", name.getValue())).append(')');
            separator = " and ";
        }
        return text.append(caseOnly ? " differ in letter case only" : " look alike but are spelled with different "
                + "characters (an accent composed or decomposed, a compatibility form such as a full-width letter "
                + "or a ligature, or letter case; their characters beyond ASCII are shown escaped)")
                .append(": resource names are compared exactly, so these are separate resources, each with its own "
                        + "lock and max_seen, and calls of each can write the same data at once; spell the resource "
                        + "the same way everywhere")
                .append(caseOnly ? "" : " (type it again, or write it with the escapes of the one you keep; an "
                        + "accent composed, as NFC gives it, is the usual form)")
                .append(", or name them apart").toString();
    }

    /** {@code name} with every character beyond printable ASCII as its Java escape {@code \}{@code uXXXX}. */
    private static String escaped(String name) {
        StringBuilder out = new StringBuilder(name.length() + 16);
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c >= ' ' && c <= '~' && c != '\\') {
                out.append(c);
            } else {
                out.append(String.format("\\u%04X", (int) c));
            }
        }
        return out.toString();
    }
}
