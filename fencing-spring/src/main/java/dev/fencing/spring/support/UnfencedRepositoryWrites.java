package dev.fencing.spring.support;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The write methods a Spring Data repository leaves unfenced while it fences others: with {@code @Fenced} on
 * {@code save} only, {@code saveAll}, {@code deleteById} or a {@code @Modifying} query of the same repository writes
 * with no check, and a zombie's write through it lands. Each such repository is named in one startup warning, with
 * its unfenced write methods (by name: {@code save}, {@code delete}, {@code remove}, {@code insert}, {@code update},
 * {@code upsert}, {@code persist}, {@code merge}, {@code flush} followed by nothing or a capital; or Spring Data's
 * {@code @Modifying}, {@code @Procedure}, or a {@code @Query} whose text starts with a writing statement) and what to
 * do. An entry names a method by its name, so it covers all its overloads. Methods listed in {@value #ALLOWED} are
 * deliberately unfenced; an entry naming another method of such a repository is a startup problem (a typo must not
 * leave a write unreported). Checks nothing without Spring Data on the class path.
 */
final class UnfencedRepositoryWrites {

    /** The property listing {@code Repository.method} or {@code Repository} entries that may stay unfenced. */
    static final String ALLOWED = "fencing.allowed-unfenced-writes";

    private static final Log log = LogFactory.getLog(UnfencedRepositoryWrites.class);

    private static final String REPOSITORY = "org.springframework.data.repository.Repository";
    private static final Pattern WRITE = Pattern.compile("(save|delete|remove|insert|update|upsert|persist|merge|flush)"
            + "(?![a-z]).*");
    /** A query whose first keyword writes (a native {@code UPDATE ... RETURNING} needs no {@code @Modifying}). */
    private static final Pattern WRITING_QUERY = Pattern.compile("(?is)\\s*(insert|update|delete|merge|upsert|replace)"
            + "\\b.*");

    private final Class<?> repository;
    private final Set<String> allowed;
    private final Set<String> used = new TreeSet<>();
    /** Per name of a fenced repository interface (each of {@link #names}), all its unfenced write methods. */
    private final Map<String, Set<String>> seen = new HashMap<>();
    /** Per repository interface (its qualified name), the names of its unfenced write methods not allowed. */
    private final Map<String, Set<String>> unfenced = new TreeMap<>();
    /** Per repository interface (its qualified name), the names of its methods that check. */
    private final Map<String, Set<String>> checking = new TreeMap<>();

    private UnfencedRepositoryWrites(Class<?> repository, Set<String> allowed) {
        this.repository = repository;
        this.allowed = allowed;
    }

    /** The check for this class loader's Spring Data (none without it) and the entries of {@value #ALLOWED}. */
    static UnfencedRepositoryWrites of(ClassLoader classLoader, Environment environment) {
        Class<?> repository = null;
        if (ClassUtils.isPresent(REPOSITORY, classLoader)) {
            repository = ClassUtils.resolveClassName(REPOSITORY, classLoader);
        }
        return new UnfencedRepositoryWrites(repository, allowedEntries(environment));
    }

    /**
     * Takes note of {@code userType}'s unfenced write methods when it is a Spring Data repository interface with a
     * method that checks.
     *
     * @param methods  the type's methods, inherited ones included
     * @param checks   those of them whose fence checks (not acquiring ones)
     * @param fenced   those of them that are fenced at all
     */
    void inspect(Class<?> userType, List<Method> methods, Set<Method> checks, Set<Method> fenced) {
        if (repository == null || !userType.isInterface() || !repository.isAssignableFrom(userType)
                || checks.isEmpty()) {
            return;
        }
        String type = userType.getName();
        Set<String> writes = new TreeSet<>();
        Map<String, Integer> overloads = new HashMap<>();
        methods.forEach(method -> overloads.merge(method.getName(), 1, Integer::sum));
        Set<String> shown = new TreeSet<>();
        for (Method method : methods) {
            // default methods too: Spring Data runs a repository's default method (JpaRepository.deleteInBatch) on
            // the repository itself, so what it calls is not fenced either
            if (!fenced.contains(method) && writes(method)) {
                writes.add(method.getName());
                if (!allows(userType, method.getName())) {
                    shown.add(overloads.get(method.getName()) > 1 ? signature(method) : method.getName());
                }
            }
        }
        for (String name : names(userType)) {
            seen.put(name, writes);
        }
        Set<String> checkNames = checking.computeIfAbsent(type, n -> new TreeSet<>());
        checks.forEach(method -> checkNames.add(overloads.get(method.getName()) > 1 ? signature(method)
                : method.getName()));
        if (!shown.isEmpty()) {
            unfenced.computeIfAbsent(type, n -> new TreeSet<>()).addAll(shown);
        }
    }

    /** {@code name(Type, Type)}, for a method whose name the repository overloads. */
    private static String signature(Method method) {
        StringBuilder text = new StringBuilder(method.getName()).append('(');
        Class<?>[] parameters = method.getParameterTypes();
        for (int i = 0; i < parameters.length; i++) {
            text.append(i == 0 ? "" : ", ").append(parameters[i].getSimpleName());
        }
        return text.append(')').toString();
    }

    /**
     * Adds to {@code problems} each entry of {@value #ALLOWED} that names a method of a fenced repository of this
     * context that is not one of its unfenced write methods (a typo, or a method fenced since). An entry naming a
     * repository not in this context (a test slice's), or a fenced repository with no unfenced write method left
     * (which would let one added later through unnamed), is only logged at INFO.
     */
    void addProblems(Set<String> problems) {
        for (String entry : allowed) {
            if (used.contains(entry)) {
                continue;
            }
            if (seen.containsKey(entry)) {
                log.info(ALLOWED + " lists '" + entry + "', a repository whose write methods are all fenced now: "
                        + "the entry allows nothing, and would let a write method added to it later run unfenced "
                        + "without a warning; remove it");
                continue;
            }
            int dot = entry.lastIndexOf('.');
            Set<String> writes = dot > 0 ? seen.get(entry.substring(0, dot)) : null;
            if (writes != null && writes.contains(entry.substring(dot + 1))) {
                continue; // an unfenced write method, also allowed by its repository's own entry
            }
            if (writes != null) {
                problems.add(ALLOWED + " lists '" + entry + "', which is not an unfenced write method of "
                        + entry.substring(0, dot) + " (those are " + writes + "); fix or remove the entry");
            } else {
                log.info(ALLOWED + " lists '" + entry + "', which names no Spring Data repository with @Fenced "
                        + "methods in this context (entries are Repository.method or Repository, by the interface's "
                        + "simple or qualified name)");
            }
        }
    }

    /** Logs one warning per repository with unfenced write methods; once startup accepted the configuration. */
    void warn() {
        unfenced.forEach((type, methods) -> warn(ClassUtils.getShortName(type), checking.get(type), methods));
    }

    private static void warn(String name, Set<String> checks, Set<String> methods) {
        String first = methods.iterator().next().replaceFirst("\\(.*", "");
        log.warn(name + " fences " + checks + " with @Fenced but "
                + "not its write methods " + methods + ": a call of one writes without any check, so a zombie's "
                + "write through it lands. Annotate each one the application calls (redeclare it on " + name
                + " with @Fenced), or, if no method of it is keyed, put @Fenced(resource = ...) on " + name
                + " to fence all its methods (reads included); list one "
                + "that is deliberately unfenced (a job that holds no lock) in " + ALLOWED + " (" + name + "."
                + first + ", by name for all its overloads, or " + name + " for all its methods)");
    }

    private boolean allows(Class<?> type, String method) {
        for (String typeName : names(type)) {
            for (String entry : new String[] {typeName, typeName + "." + method}) {
                if (allowed.contains(entry)) {
                    used.add(entry);
                    return true;
                }
            }
        }
        return false;
    }

    /** The names an entry may give {@code type} by: qualified, short ({@code Outer.Inner}), simple. */
    private static Set<String> names(Class<?> type) {
        return new LinkedHashSet<>(List.of(type.getName(), ClassUtils.getShortName(type), type.getSimpleName()));
    }

    private static boolean writes(Method method) {
        if (WRITE.matcher(method.getName()).matches()) {
            return true;
        }
        return MergedAnnotations.from(method).stream().anyMatch(UnfencedRepositoryWrites::writes);
    }

    /** {@code @Modifying}, {@code @Procedure}, or a {@code @Query} whose text writes, of Spring Data. */
    private static boolean writes(MergedAnnotation<?> annotation) {
        Class<?> type = annotation.getType();
        if (!type.getName().startsWith("org.springframework.data.")) {
            return false;
        }
        return switch (type.getSimpleName()) {
            case "Modifying", "Procedure" -> true;
            case "Query" -> annotation.getValue("value").filter(String.class::isInstance)
                    .map(text -> WRITING_QUERY.matcher((String) text).matches()).orElse(false);
            default -> false;
        };
    }

    /**
     * The entries of {@value #ALLOWED}: a comma-separated value, or Spring Boot's indexed form of a list
     * ({@code [0]}, {@code [1]}, ...: YAML), trimmed, blanks dropped.
     */
    private static Set<String> allowedEntries(Environment environment) {
        List<String> values = new ArrayList<>();
        String joined = environment.getProperty(ALLOWED);
        if (joined != null) {
            values.add(joined);
        }
        for (int i = 0; ; i++) {
            String value = environment.getProperty(ALLOWED + "[" + i + "]");
            if (value == null) {
                break;
            }
            values.add(value);
        }
        Set<String> entries = new LinkedHashSet<>();
        for (String value : values) {
            for (String entry : value.split(",")) {
                if (!entry.isBlank()) {
                    entries.add(entry.trim());
                }
            }
        }
        return entries;
    }
}
