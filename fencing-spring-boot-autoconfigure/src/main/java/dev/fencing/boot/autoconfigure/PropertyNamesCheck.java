package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Fails startup on a {@code fencing.*} property the starter does not know ({@code fencing.compaction.idel-for},
 * {@code fencing.issuer.ofset.base}): Spring Boot ignores unknown keys, and a misspelt one here silently leaves a
 * safety setting at its default (an issuer without its offset refuses every write; a mode meant to enforce stays
 * observing). Known names come from the starter's configuration metadata; under a map or list property
 * ({@code fencing.modes.*}, {@code fencing.signing.keys.*}) any key is accepted. Environment variables are not checked
 * (their names cannot be told apart from other programs'), nor is anything when the metadata is missing. Compaction
 * settings without {@code fencing.compaction.enabled=true} are logged as a warning: nothing runs on them. The values
 * of switches, numbers and durations, environment variables included, are checked too ({@link #checkValue}).
 */
final class PropertyNamesCheck implements BeanFactoryPostProcessor {

    private static final String METADATA = "META-INF/spring-configuration-metadata.json";
    private static final Pattern PROPERTY = Pattern.compile(
            "\"name\"\\s*:\\s*\"(fencing\\.[^\"]+)\"\\s*,\\s*\"type\"\\s*:\\s*\"([^\"]+)\"");

    private static final Log log = LogFactory.getLog(PropertyNamesCheck.class);
    private static final ConfigurationPropertyName COMPACTION = ConfigurationPropertyName.of("fencing.compaction");
    private static final ConfigurationPropertyName COMPACTION_ENABLED =
            ConfigurationPropertyName.of("fencing.compaction.enabled");

    private final Environment environment;
    private final ClassLoader classLoader;

    PropertyNamesCheck(Environment environment, ClassLoader classLoader) {
        this.environment = environment;
        this.classLoader = classLoader;
    }

    @Override
    public void postProcessBeanFactory(ConfigurableListableBeanFactory beans) {
        if (!(environment instanceof ConfigurableEnvironment configurable)) {
            return;
        }
        Map<String, Boolean> known = known(classLoader); // name -> takes keys below it (a map or a list)
        if (known.isEmpty()) {
            return;
        }
        List<String> problems = new ArrayList<>();
        Set<String> compaction = new TreeSet<>();
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(configurable)) {
            if (!(source instanceof IterableConfigurationPropertySource iterable)
                    || source.getUnderlyingSource() instanceof SystemEnvironmentPropertySource) {
                continue;
            }
            iterable.stream().filter(name -> name.getNumberOfElements() > 0 && name.getElement(0,
                    ConfigurationPropertyName.Form.UNIFORM).equals("fencing")).forEach(name -> {
                        String problem = check(name, known);
                        if (problem != null && !problems.contains(problem)) {
                            problems.add(problem);
                        }
                        if (problem == null && COMPACTION.isAncestorOf(name) && !COMPACTION_ENABLED.equals(name)) {
                            compaction.add(name.toString());
                        }
                    });
        }
        for (String name : known.keySet()) { // environment variables too (FENCING_COMPACTION_CRON), not listed above
            if (name.startsWith(COMPACTION + ".") && !name.equals(COMPACTION_ENABLED.toString())
                    && environment.containsProperty(name)) {
                compaction.add(name);
            }
        }
        if (!compaction.isEmpty() && !environment.getProperty(COMPACTION_ENABLED.toString(), Boolean.class, false)) {
            log.warn(String.join(", ", compaction) + (compaction.size() == 1 ? " is" : " are") + " set, but "
                    + COMPACTION_ENABLED + " is not true: no compaction is scheduled");
        }
        if (!problems.isEmpty()) {
            throw new FencingConfigurationException("Unknown fencing properties (a misspelt key is ignored by Spring "
                    + "Boot and leaves its setting at the default):\n  - " + String.join("\n  - ", problems)
                    + "\nThe properties are listed in the README's \"Spring Boot\" section.");
        }
        List<String> values = new ArrayList<>();
        types(classLoader).forEach((name, type) -> {
            String value;
            try {
                value = environment.getProperty(name);
            } catch (IllegalArgumentException unresolvable) {
                return; // a placeholder Boot reports itself when it binds the property
            }
            String problem = value == null ? null : checkValue(name, type, value);
            if (problem != null) {
                values.add(problem);
            }
        });
        if (!values.isEmpty()) {
            throw new FencingConfigurationException("Fencing properties with values Spring Boot would misread:\n  - "
                    + String.join("\n  - ", values));
        }
    }

    /**
     * What is wrong with {@code value} of the property {@code name} of the metadata type {@code type}, or {@code null}:
     * a switch that is neither true nor false (Boot's conditions match "true" only, so {@code enabled=yes} left a
     * feature silently off), an empty number, switch or duration (a placeholder with an empty default: an empty
     * {@code max-advance} meant no bound), and a duration without a unit, which Boot reads as milliseconds
     * ({@code lock-timeout=5} was a 5 ms bound); {@code fencing.compaction.idle-for} reads a bare number as days.
     */
    static String checkValue(String name, String type, String value) {
        String trimmed = value.trim();
        boolean flag = type.equals("java.lang.Boolean") || type.equals("boolean");
        boolean duration = type.equals("java.time.Duration");
        boolean number = type.equals("java.lang.Long") || type.equals("java.lang.Integer") || type.equals("long")
                || type.equals("int");
        if (!flag && !duration && !number) {
            return null;
        }
        if (trimmed.isEmpty()) {
            return "'" + name + "' is set but empty (a placeholder with an empty default?): remove it to keep the "
                    + "default, or give it a value";
        }
        if (flag && (!trimmed.equalsIgnoreCase("true") && !trimmed.equalsIgnoreCase("false")
                || !trimmed.equals(value))) {
            return "'" + name + "' is '" + value + "', but takes true or false" + (trimmed.equals(value) ? ""
                    : ", without spaces around it") + " (Spring Boot's switches match 'true' only, so anything else "
                    + "leaves it off)";
        }
        if (duration && !name.equals(COMPACTION + ".idle-for") && trimmed.matches("[+-]?\\d+")) {
            return "'" + name + "' is '" + value + "', a number without a unit, which Spring Boot reads as "
                    + trimmed + " milliseconds: write the unit (" + trimmed + "ms, " + trimmed + "s, " + trimmed
                    + "m)";
        }
        return null;
    }

    /**
     * A problem with {@code name}, or {@code null} when it is one of {@code known} or under a map or list of it.
     * Compared in Boot's uniform form (no dashes, lower case), so relaxed spellings ({@code acquireTimeout}) pass.
     */
    static String check(ConfigurationPropertyName name, Map<String, Boolean> known) {
        Map<String, Boolean> uniform = new TreeMap<>();
        Map<String, String> original = new TreeMap<>();
        known.forEach((key, container) -> {
            uniform.put(uniform(key), container);
            original.put(uniform(key), key);
        });
        StringBuilder prefix = new StringBuilder();
        StringBuilder dashed = new StringBuilder();
        for (int i = 0; i < name.getNumberOfElements(); i++) {
            if (name.isNumericIndex(i) || i > 0 && name.getElement(i, ConfigurationPropertyName.Form.ORIGINAL)
                    .startsWith("[")) {
                break;
            }
            if (i > 0) {
                prefix.append('.');
                dashed.append('.');
            }
            prefix.append(name.getElement(i, ConfigurationPropertyName.Form.UNIFORM));
            dashed.append(name.getElement(i, ConfigurationPropertyName.Form.DASHED));
            Boolean container = uniform.get(prefix.toString());
            if (container != null && (container || i == name.getNumberOfElements() - 1)) {
                return null;
            }
        }
        String text = name.toString();
        String group = dashed + ".";
        if (known.keySet().stream().anyMatch(key -> key.startsWith(group))) {
            // a value for a group (fencing.issuer=zookeeper): Boot binds nothing from it
            String type = known.containsKey(group + "type") ? group + "type" : null;
            return "'" + text + "' names a group of properties (" + group + "*), which takes no value of its own"
                    + (type == null ? "" : ": did you mean '" + type + "'?");
        }
        String nearest = nearest(dashed.toString(), known);
        return "'" + text + "'" + (nearest == null ? "" : ": did you mean '" + nearest + "'?");
    }

    private static String uniform(String name) {
        return name.replace("-", "").toLowerCase(java.util.Locale.ROOT);
    }

    private static String nearest(String name, Map<String, Boolean> known) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String candidate : known.keySet()) {
            int distance = distance(name, candidate);
            if (distance < bestDistance) {
                bestDistance = distance;
                best = candidate;
            }
        }
        return bestDistance <= Math.max(3, name.length() / 4) ? best : null;
    }

    /** The edit distance of {@code a} and {@code b}, for a hint at the name meant. */
    static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                current[j] = Math.min(Math.min(current[j - 1] + 1, previous[j] + 1), previous[j - 1] + cost);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }

    /** The {@code fencing.*} property names of every configuration metadata file on the class path. */
    static Map<String, Boolean> known(ClassLoader classLoader) {
        Map<String, Boolean> known = new TreeMap<>();
        types(classLoader).forEach((name, type) ->
                known.put(name, type.startsWith("java.util.Map") || type.startsWith("java.util.List")));
        return known;
    }

    /** The {@code fencing.*} properties of every configuration metadata file on the class path, with their types. */
    static Map<String, String> types(ClassLoader classLoader) {
        Map<String, String> types = new TreeMap<>();
        try {
            Enumeration<URL> files = classLoader.getResources(METADATA);
            while (files.hasMoreElements()) {
                try (InputStream in = files.nextElement().openStream()) {
                    // the properties alone: a group ("fencing.issuer") has a name and a type too, and no value
                    Matcher matcher = PROPERTY.matcher(propertiesOf(new String(in.readAllBytes(),
                            StandardCharsets.UTF_8)));
                    while (matcher.find()) {
                        types.put(matcher.group(1), matcher.group(2));
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Could not read " + METADATA, e);
        }
        return types;
    }

    /** The {@code "properties"} array of a metadata file, without its groups and hints (Boot writes that order). */
    private static String propertiesOf(String metadata) {
        int start = metadata.indexOf("\"properties\"");
        if (start < 0) {
            return "";
        }
        int hints = metadata.indexOf("\"hints\"", start);
        return metadata.substring(start, hints < 0 ? metadata.length() : hints);
    }

    /** For tests: the names known on this class loader. */
    static TreeSet<String> knownNames(ClassLoader classLoader) {
        return new TreeSet<>(known(classLoader).keySet());
    }
}
