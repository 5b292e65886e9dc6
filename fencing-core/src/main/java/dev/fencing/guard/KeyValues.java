package dev.fencing.guard;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.FencingKey;
import dev.fencing.token.FencingToken;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.lang.reflect.RecordComponent;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.chrono.ChronoZonedDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.Future;
import java.util.stream.BaseStream;

/**
 * Internal: public for the Spring and AspectJ adapters (fencing-spring), not for applications.
 * Decides which key values have a stable text, i.e. the same entity always yields the same text: character
 * sequences, primitives and their boxes, {@code BigInteger}/{@code BigDecimal} (whose text is normalized: {@code 1},
 * {@code 1.00} and {@code 1E+0} are {@code 1}), {@code UUID}, enums (whose text is their name: a constant whose
 * {@code toString()} is overridden is refused), {@code java.time} values (an {@code OffsetDateTime} or a
 * {@code ZonedDateTime} has its instant's text, the same at every offset or zone; an {@code OffsetTime}, which names
 * no instant, is refused), records whose components have a stable text themselves, a {@code BigDecimal} or a zoned
 * date-time not among them (judged by their declared types, recursively, and
 * per call by their values where the declared type is open: an interface, an abstract or other non-final class),
 * classes that declare {@code toString()} themselves (or in a superclass other than {@code Object}), and
 * {@link FencingKey} implementations (whose {@code fencingKey()} is used). Arrays, collections, maps, optionals,
 * publishers, futures, streams, proxies and classes with identity text are refused, and so is a record with a
 * component of one of those types, a floating-point one, or one whose text is normalized only as a key of its own (a
 * record's text is its components' {@code toString()}: {@code Ref[id=1.00]}). The decision is made once per class;
 * a record's open components are read per call through accessors resolved once.
 */
public final class KeyValues {

    /** How the text of a value of one class is obtained, or why it has none. */
    enum Kind {
        TEXT(null),
        /**
         * A value whose {@code toString()} tells apart values that are equal, given a text of its own as a key
         * ({@link #normalized}): a {@code BigDecimal}, an {@code OffsetDateTime}, a zoned date-time. Refused as a
         * record's component, whose text the record's {@code toString()} makes ({@link #componentRefusal}).
         */
        NORMALIZED(null),
        FENCING_KEY(null),
        ARRAY("an array, whose text (such as %s@1b2c) names the array instance, not an entity"),
        ELEMENTS("a collection, map or optional, whose text depends on its elements"),
        PROXY("a proxy, whose text comes from its invocation handler"),
        FLOATING("a floating-point number, whose text tells apart values that compare equal (0.0 and -0.0); key on "
                + "an integer, a string or a BigDecimal (whose key text is normalized: 1.50 and 1.5 are one)"),
        OFFSET_TIME("an OffsetTime, whose text tells apart one time at two offsets (09:00Z and 10:00+01:00) and which "
                + "names no instant without a date"),
        DEFERRED("a value still to come (a publisher, future, stream or iterator), whose text (such as MonoJust) "
                + "names the holder, not the entity: the key is read when the method is called, before the value "
                + "arrives"),
        IDENTITY("a class that does not override toString(), so its text (such as %s@1b2c) names the instance, "
                + "not the entity"),
        INLINE("a Kotlin value class, whose text where Kotlin passes it boxed (a nullable or generic parameter: "
                + "AccountId(v=1)) is not its text where Kotlin passes the underlying value (a non-null parameter: 1)"),
        RENAMED_ENUM("an enum constant whose toString() is overridden, so its text is not its name (a lock taken "
                + "elsewhere by the constant's name, as FencedLockRegistry names enum keys, would not match)"),
        /** A record with a component whose type has no stable text: its refusal is its {@link RecordText}'s. */
        UNSTABLE_RECORD(null),
        /** A record with components to look at per call (declared open): {@link RecordText#unstable}. */
        OPEN_RECORD(null);

        final String refusal;

        Kind(String refusal) {
            this.refusal = refusal;
        }
    }

    private static final ClassValue<Kind> KINDS = new ClassValue<>() {
        @Override
        protected Kind computeValue(Class<?> type) {
            return FencingKey.class.isAssignableFrom(type) ? Kind.FENCING_KEY : classify(type);
        }
    };

    /**
     * Per class, what its {@code toString()} gives as a record component's text (a record's text is made of its
     * components' {@code toString()}, never their {@code fencingKey()}).
     */
    private static final ClassValue<Kind> TEXT_KINDS = new ClassValue<>() {
        @Override
        protected Kind computeValue(Class<?> type) {
            return FencingKey.class.isAssignableFrom(type) ? classify(type) : KINDS.get(type);
        }
    };

    /** Per record class, how its components make its text. */
    private static final ClassValue<RecordText> RECORDS = new ClassValue<>() {
        @Override
        protected RecordText computeValue(Class<?> type) {
            return RecordText.of(type, new HashSet<>());
        }
    };

    private KeyValues() {
    }

    /**
     * The text of {@code value} as a key, or {@code null} when it has none (null, or a type without a stable text).
     * Blank texts are returned as they are; the caller refuses them.
     */
    public static String textOf(Object value) {
        if (value instanceof String text) {
            return text;
        }
        if (value == null) {
            return null;
        }
        return switch (KINDS.get(value.getClass())) {
            case TEXT -> value.toString();
            case NORMALIZED -> normalized(value);
            case FENCING_KEY -> ((FencingKey) value).fencingKey();
            case OPEN_RECORD -> RECORDS.get(value.getClass()).unstable(value) == null ? value.toString() : null;
            default -> null;
        };
    }

    /**
     * The key text of a value of a {@link Kind#NORMALIZED} class, one for all values that are equal: a
     * {@code BigDecimal} without trailing zeros, in plain digits ({@code 1.00} and {@code 1E+0} are {@code 1},
     * {@code 0.00} is {@code 0}, {@code 1E+3} is {@code 1000}), or in scientific notation when the plain digits would
     * not fit in an effective resource ({@code 1E+999999999}: its plain text would be a billion characters); a
     * zoned or offset date-time as its instant ({@code 2026-12-06T10:00+01:00} and {@code 2026-12-06T09:00Z[UTC]} are
     * {@code 2026-12-06T09:00:00Z}, as an {@code Instant} of that moment reads).
     */
    private static String normalized(Object value) {
        if (value instanceof BigDecimal number) {
            BigDecimal stripped = number.stripTrailingZeros();
            int precision = stripped.precision();
            int scale = stripped.scale();
            // the length of toPlainString(), computed before building it: digits, the zeros a scale adds, '.', '-'
            long plain = (scale <= 0 ? (long) precision - scale : Math.max(precision, scale + 1L) + 1)
                    + (stripped.signum() < 0 ? 1 : 0);
            return plain <= FencingToken.MAX_PART_LENGTH ? stripped.toPlainString() : stripped.toString();
        }
        if (value instanceof OffsetDateTime time) {
            return time.toInstant().toString();
        }
        if (value instanceof java.util.Date date) { // a java.util.Date or java.sql.Timestamp (isInstantDate)
            return date.toInstant().toString();
        }
        return ((ChronoZonedDateTime<?>) value).toInstant().toString();
    }

    /**
     * Whether {@code type} is a {@code java.util.Date} that names an instant and prints it in the JVM's default time
     * zone (two instances in two zones would name one entity twice): {@code java.util.Date} and
     * {@code java.sql.Timestamp} (whose {@code toInstant()} keeps its nanoseconds), not {@code java.sql.Date} or
     * {@code java.sql.Time}, whose texts ({@code 2026-12-06}, {@code 09:00:00}) do not depend on the zone.
     */
    private static boolean isInstantDate(Class<?> type) {
        return java.util.Date.class.isAssignableFrom(type) && !type.getName().equals("java.sql.Date")
                && !type.getName().equals("java.sql.Time");
    }

    /**
     * Why a value of {@code type} has no stable text, or {@code null} when it has one (or, for a record with
     * components declared open, may have one: {@link #refusalOf} looks at a value's).
     */
    public static String refusal(Class<?> type) {
        return refusal(KINDS.get(type), type);
    }

    /**
     * Why {@code value} has no stable text, or {@code null} when it has one: {@link #refusal(Class)} of its class,
     * and for a record whose components are declared open, the first component whose value has none.
     */
    public static String refusalOf(Object value) {
        if (value != null && KINDS.get(value.getClass()) == Kind.OPEN_RECORD) {
            return RECORDS.get(value.getClass()).unstable(value);
        }
        return value == null ? null : refusal(value.getClass());
    }

    private static String refusal(Kind kind, Class<?> type) {
        if (kind == Kind.UNSTABLE_RECORD) {
            return RECORDS.get(type).refusal;
        }
        if (kind == Kind.ARRAY) {
            return String.format(kind.refusal, type.isArray() ? type.getName() : "[Ljava.lang.Object;");
        }
        return kind == Kind.IDENTITY ? String.format(kind.refusal, simpleName(type)) : kind.refusal;
    }

    /**
     * Why a record's component of {@code type} makes no stable text: {@link #refusal(Kind, Class)}, and for a value
     * whose text is normalized only as a key of its own, why its {@code toString()}, which the record's text is made
     * of, is not.
     */
    private static String componentRefusal(Kind kind, Class<?> type) {
        if (kind != Kind.NORMALIZED) {
            return refusal(kind, type);
        }
        String name = simpleName(type);
        return ("AEIOU".indexOf(name.charAt(0)) >= 0 ? "an " : "a ") + name + (BigDecimal.class.isAssignableFrom(type)
                ? ", whose text tells apart values that compare equal (1 and 1.00)" : ", whose text tells apart one "
                + "instant at two offsets or zones (09:00Z and 10:00+01:00)") + ", and a record's text is made of its "
                + "components' toString() (its key text is normalized only as a key of its own)";
    }

    /** Whether a value of {@code type} has a text as a key of its own, for a message's example. */
    private static boolean hasOwnText(Class<?> type) {
        Kind kind = KINDS.get(type);
        return kind == Kind.TEXT || kind == Kind.NORMALIZED;
    }

    private static String simpleName(Class<?> type) {
        return type.getSimpleName().isEmpty() ? type.getName() : type.getSimpleName();
    }

    /**
     * What a message refusing a value of {@code type} as the key {@code keySource} tells the user to do: for a
     * floating-point number nothing more than its refusal says, else to key on a value with a stable text, with
     * {@link #example an example} that fits the type.
     */
    public static String remedy(Class<?> type, String keySource) {
        Kind kind = KINDS.get(type);
        if (kind == Kind.FLOATING) {
            return "";
        }
        if (kind == Kind.DEFERRED) {
            return ". Take the value itself as the parameter (resolve it before the call), or key on another argument";
        }
        if (kind == Kind.RENAMED_ENUM) {
            return ". Key on its name (e.g. '" + keySource + ".name()')";
        }
        if (kind == Kind.OFFSET_TIME) {
            return ". Key on a date-time that names an instant (an OffsetDateTime, a ZonedDateTime or an Instant), or "
                    + "implement " + FencingKey.class.getName() + " on a type of your own that gives the time one text "
                    + "(at one offset you choose)";
        }
        if (kind == Kind.UNSTABLE_RECORD && RECORDS.get(type).cause == Kind.NORMALIZED) {
            RecordText record = RECORDS.get(type);
            return ". Key on that component itself (e.g. '" + keySource + "." + record.example + "'), whose text as a "
                    + "key of its own is normalized, or implement " + FencingKey.class.getName() + " on "
                    + simpleName(type) + " (its fencingKey() is used instead of toString()) and give it one text there";
        }
        if (kind == Kind.UNSTABLE_RECORD || kind == Kind.OPEN_RECORD) {
            String component = RECORDS.get(type).example;
            return ". Key on a component with a stable text" + (component != null ? " (e.g. '" + keySource + "."
                    + component + "')" : "") + ", or implement " + FencingKey.class.getName() + " on "
                    + simpleName(type) + " (its fencingKey() is used instead of toString())";
        }
        if (kind == Kind.INLINE) {
            return ". Key on its underlying value (e.g. '" + keySource + "." + underlyingProperty(type) + "'), whose "
                    + "text is the same boxed or not, or implement " + FencingKey.class.getName();
        }
        if (kind == Kind.ARRAY || kind == Kind.ELEMENTS && !Optional.class.equals(type)
                && !Map.class.isAssignableFrom(type)) {
            return ". A batch of entities is fenced one entity per call: call a method keyed on one element for each "
                    + "(under an unkeyed @Fenced(acquire = true) lock for the batch when it must be one critical "
                    + "section); keying on one element (e.g. '" + example(type, keySource) + "') fences that entity "
                    + "only. For a single value, key on it, or implement " + FencingKey.class.getName();
        }
        String example = example(type, keySource);
        return ". Key on a value with a stable text" + (example != null ? " (e.g. '" + example + "')" : " inside it")
                + ", override toString(), or implement " + FencingKey.class.getName();
    }

    /**
     * A key the message for a refused value of {@code type} can suggest in place of {@code keySource}: an element of
     * an array or list ({@code #ids[0]}), an optional's value ({@code #o.get()}), a map's entry ({@code #m['id']}),
     * else a property ({@code #order.id}).
     */
    public static String example(Class<?> type, String keySource) {
        if (type.isArray() || List.class.isAssignableFrom(type)) {
            return keySource + "[0]";
        }
        if (Optional.class == type) {
            return keySource + ".get()";
        }
        if (Map.class.isAssignableFrom(type)) {
            return keySource + "['id']";
        }
        String property = property(type);
        return property == null ? null : keySource + "." + property;
    }

    /**
     * A property of {@code type} with a stable text a key can read, for a message: {@code id} when it has one (a
     * getter, an accessor or a field), else its first public getter of a text, number, UUID or enum; {@code null}
     * when there is none, so that no message names a property the class lacks.
     */
    private static String property(Class<?> type) {
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            for (java.lang.reflect.Field field : c.getDeclaredFields()) {
                if (field.getName().equals("id") && !Modifier.isStatic(field.getModifiers())) {
                    return "id";
                }
            }
        }
        String first = null;
        for (Method method : type.getMethods()) {
            if (method.getParameterCount() != 0 || Modifier.isStatic(method.getModifiers())
                    || method.getDeclaringClass() == Object.class || !hasOwnText(method.getReturnType())) {
                continue;
            }
            String name = method.getName();
            if (name.equals("id") || name.equals("getId")) {
                return "id";
            }
            if (first == null && name.length() > 3 && name.startsWith("get")) {
                first = Character.toLowerCase(name.charAt(3)) + name.substring(4);
            }
        }
        return first;
    }

    /**
     * Fails when no argument declared as {@code type} can have a stable text: an array, a collection, map or
     * optional type, a publisher, future, stream or iterator type, or a concrete class (other than {@code Object})
     * that has none. Other interfaces, abstract classes and {@code Object} pass: their values are checked on each
     * call.
     *
     * @param type      the declared type of the parameter the key reads
     * @param operation the method, for the message
     * @param keySource the key expression, for the message
     * @throws FencingConfigurationException naming the method, the key and the type, and what to do
     */
    public static void checkParameterType(Class<?> type, String operation, String keySource) {
        Kind declared = KINDS.get(type);
        // a record refused for a component: the consequence is that component's
        Kind kind = declared == Kind.UNSTABLE_RECORD ? RECORDS.get(type).cause : declared;
        boolean alwaysRefused = kind == Kind.ARRAY || kind == Kind.ELEMENTS || kind == Kind.FLOATING
                || kind == Kind.DEFERRED || kind == Kind.OFFSET_TIME
                || (refusal(declared, type) != null && type != Object.class && !type.isInterface()
                && !Modifier.isAbstract(type.getModifiers()));
        if (alwaysRefused) {
            throw new FencingConfigurationException("@Fenced key '" + keySource + "' on " + operation
                    + " is a parameter of type " + type.getTypeName() + ", " + refusal(type) + ": "
                    + (kind == Kind.FLOATING || kind == Kind.INLINE || kind == Kind.OFFSET_TIME
                    || kind == Kind.NORMALIZED ? "one entity could be fenced as two resources"
                    : kind == Kind.DEFERRED ? "calls for different entities would fence one resource, named after the "
                    + "holder" : kind == Kind.ELEMENTS ? "one entity could be fenced under several resources, named "
                    + "after the whole value" : kind == Kind.RENAMED_ENUM ? "one entity would be fenced under a "
                    + "name other than its own" : "every call would fence a different resource")
                    + remedy(type, keySource));
        }
    }

    /** What {@code type}'s {@code toString()} gives as a key's text, {@link FencingKey} aside. */
    private static Kind classify(Class<?> type) {
        if (type.isArray()) {
            return Kind.ARRAY;
        }
        if (Collection.class.isAssignableFrom(type) || Map.class.isAssignableFrom(type) || type == Optional.class
                || type == OptionalInt.class || type == OptionalLong.class || type == OptionalDouble.class) {
            return Kind.ELEMENTS;
        }
        if (type == double.class || type == float.class || type == Double.class || type == Float.class) {
            return Kind.FLOATING;
        }
        if (BigDecimal.class.isAssignableFrom(type) || OffsetDateTime.class == type
                || ChronoZonedDateTime.class.isAssignableFrom(type) || isInstantDate(type)) {
            return Kind.NORMALIZED;
        }
        if (type == OffsetTime.class) {
            return Kind.OFFSET_TIME;
        }
        if (Future.class.isAssignableFrom(type) || CompletionStage.class.isAssignableFrom(type)
                || BaseStream.class.isAssignableFrom(type) || Iterator.class.isAssignableFrom(type)
                || Flow.Publisher.class.isAssignableFrom(type) || implementsNamed(type, REACTIVE_STREAMS_PUBLISHER)) {
            return Kind.DEFERRED;
        }
        if (Enum.class.isAssignableFrom(type) && toStringOverriddenBelowEnum(type)) {
            return Kind.RENAMED_ENUM;
        }
        if (isKotlinValueClass(type)) {
            return Kind.INLINE;
        }
        if (type.isPrimitive() || CharSequence.class.isAssignableFrom(type) || Number.class.isAssignableFrom(type)
                && (type.getName().startsWith("java.lang.") || type == BigInteger.class)
                || type == Boolean.class || type == Character.class || type == UUID.class || type.isEnum()
                || Enum.class.isAssignableFrom(type) || type.getName().startsWith("java.time.")) {
            return Kind.TEXT;
        }
        if (type.isRecord()) {
            RecordText text = RECORDS.get(type);
            return text.refusal != null ? Kind.UNSTABLE_RECORD : text.open.length > 0 ? Kind.OPEN_RECORD : Kind.TEXT;
        }
        if (Proxy.isProxyClass(type)) {
            return Kind.PROXY;
        }
        return declaresToString(type) ? Kind.TEXT : Kind.IDENTITY;
    }


    /**
     * How a record's components make its text ({@code Name[a=..., b=...]}, each component's {@code toString()}):
     * {@code refusal} (with the {@code cause} of the component that makes it) when a component's declared type can
     * never have a stable text (recursively through record components); else the accessors of the components declared
     * open (an interface, an abstract or other non-final class, {@code Object}, a record being judged above), whose
     * values are looked at on each call.
     */
    private static final class RecordText {

        final String refusal;
        final Kind cause;
        final MethodHandle[] open;
        final String[] openNames;
        /**
         * A component with a stable text, for a message's example ({@code null} when the record has none); for a
         * record refused for a value whose text is normalized only as a key of its own, the path to that value.
         */
        final String example;

        private RecordText(String refusal, Kind cause, MethodHandle[] open, String[] openNames, String example) {
            this.refusal = refusal;
            this.cause = cause;
            this.open = open;
            this.openNames = openNames;
            this.example = example;
        }

        /** Judges {@code type}'s components by their declared types; {@code visiting}: the records judged above. */
        static RecordText of(Class<?> type, Set<Class<?>> visiting) {
            visiting.add(type);
            try {
                List<MethodHandle> open = new ArrayList<>();
                List<String> openNames = new ArrayList<>();
                String example = null;
                RecordComponent[] components = type.getRecordComponents();
                for (RecordComponent component : components) {
                    Class<?> declared = component.getType();
                    Kind refused = null;
                    String why = null;
                    boolean isOpen = false;
                    // for a refusal by a normalized value, the path to it: the message suggests keying on it
                    String normalized = null;
                    if (declared == float.class || declared == double.class) {
                        refused = Kind.FLOATING;
                    } else if (declared.isPrimitive() || declared.isEnum()) {
                        // a stable text of its own (an enum constant's toString(), overridden or not, is one)
                    } else if (declared.isRecord()) {
                        if (visiting.contains(declared)) {
                            isOpen = true; // a record inside itself: its value is judged per call
                        } else {
                            RecordText inner = of(declared, visiting);
                            refused = inner.cause;
                            why = inner.refusal;
                            isOpen = inner.open.length > 0;
                            normalized = refused == Kind.NORMALIZED ? component.getName() + "." + inner.example : null;
                        }
                    } else {
                        Kind kind = TEXT_KINDS.get(declared);
                        if (kind == Kind.ARRAY || kind == Kind.ELEMENTS || kind == Kind.FLOATING
                                || kind == Kind.DEFERRED || kind == Kind.OFFSET_TIME
                                || kind == Kind.NORMALIZED && !declared.isInterface()) {
                            refused = kind;
                            normalized = kind == Kind.NORMALIZED ? component.getName() : null;
                        } else if (declared.isInterface() || Modifier.isAbstract(declared.getModifiers())
                                || declared == Object.class) {
                            isOpen = true;
                        } else if (kind == Kind.TEXT || kind == Kind.RENAMED_ENUM || kind == Kind.INLINE) {
                            isOpen = !Modifier.isFinal(declared.getModifiers());
                        } else {
                            refused = kind;
                        }
                        why = refused == null ? null : componentRefusal(refused, declared);
                    }
                    if (refused != null) {
                        return new RecordText("a record whose component " + component.getName() + " is "
                                + (why != null ? why : componentRefusal(refused, declared)), refused,
                                new MethodHandle[0], new String[0], normalized != null ? normalized
                                : example != null ? example : stableComponentAfter(components, component));
                    }
                    if (isOpen) {
                        open.add(accessor(type, component));
                        openNames.add(component.getName());
                    } else if (example == null) {
                        example = component.getName();
                    }
                }

                return new RecordText(null, null, open.toArray(new MethodHandle[0]), openNames.toArray(new String[0]),
                        example);
            } finally {
                visiting.remove(type);
            }
        }

        /**
         * A component after {@code refused} whose declared type has a stable text of its own (a primitive other than a
         * floating-point one, a string, a number, a UUID), for a message's example; {@code null} when there is none.
         */
        private static String stableComponentAfter(RecordComponent[] components, RecordComponent refused) {
            boolean after = false;
            for (RecordComponent component : components) {
                Class<?> type = component.getType();
                if (after && type != float.class && type != double.class && (type.isPrimitive()
                        || Modifier.isFinal(type.getModifiers()) && KINDS.get(type) == Kind.TEXT)) {
                    return component.getName();
                }
                after |= component == refused;
            }
            return null;
        }

        /**
         * Why {@code value}'s text is not stable, looking at the values of its open components, or {@code null}
         * when it is.
         */
        String unstable(Object value) {
            if (refusal != null) {
                return refusal;
            }
            for (int i = 0; i < open.length; i++) {
                Object component;
                try {
                    component = open[i].invokeExact(value);
                } catch (RuntimeException | Error e) {
                    throw e;
                } catch (Throwable e) {
                    throw new IllegalStateException(e);
                }
                if (component == null || component instanceof String) {
                    continue;
                }
                Class<?> type = component.getClass();
                Kind kind = TEXT_KINDS.get(type);
                String why = switch (kind) {
                    case TEXT, RENAMED_ENUM, INLINE -> null;
                    case OPEN_RECORD -> RECORDS.get(type).unstable(component);
                    default -> componentRefusal(kind, type);
                };
                if (why != null) {
                    return "a record whose component " + openNames[i] + " (" + simpleName(type) + ") is " + why;
                }
            }
            return null;
        }

        /**
         * The accessor of {@code component} as {@code (Object) Object}, resolved once. One that cannot be made
         * accessible (a record in a module that does not open its package to the fence) becomes a handle that throws,
         * saying why: each call with such a key is refused as a key that could not be evaluated.
         */
        private static MethodHandle accessor(Class<?> type, RecordComponent component) {
            Method accessor = component.getAccessor();
            MethodType erased = MethodType.methodType(Object.class, Object.class);
            try {
                try {
                    return MethodHandles.lookup().unreflect(accessor).asType(erased);
                } catch (IllegalAccessException notPublic) {
                    accessor.setAccessible(true); // a record nested in a class that is not public, say
                    return MethodHandles.lookup().unreflect(accessor).asType(erased);
                }
            } catch (IllegalAccessException | RuntimeException e) {
                // inaccessible: the call is refused, saying why
                String message = "the fence cannot read component " + component.getName() + " of record "
                        + type.getName() + " (" + e + "), whose value decides whether its text is stable; implement "
                        + FencingKey.class.getName() + " on it, or key on a component";
                return MethodHandles.dropArguments(MethodHandles.throwException(Object.class,
                        IllegalStateException.class).bindTo(new IllegalStateException(message)), 0, Object.class);
            }
        }
    }

    /** Whether an enum type (or a constant's body class) declares {@code toString()} below {@link Enum}. */
    private static boolean toStringOverriddenBelowEnum(Class<?> type) {
        for (Class<?> c = type; c != null && c != Enum.class; c = c.getSuperclass()) {
            try {
                c.getDeclaredMethod("toString");
                return true;
            } catch (NoSuchMethodException e) {
                // not declared here: look further up
            }
        }
        return false;
    }

    /** A Kotlin value class ({@code @JvmInline value class}): its annotation, by name (Kotlin need not be present). */
    private static boolean isKotlinValueClass(Class<?> type) {
        for (java.lang.annotation.Annotation annotation : type.getDeclaredAnnotations()) {
            if (annotation.annotationType().getName().equals("kotlin.jvm.JvmInline")) {
                return true;
            }
        }
        return false;
    }

    /** The property a value class wraps: its only instance field ({@code value} when there is none to name). */
    private static String underlyingProperty(Class<?> type) {
        for (java.lang.reflect.Field field : type.getDeclaredFields()) {
            if (!Modifier.isStatic(field.getModifiers())) {
                return field.getName();
            }
        }
        return "value";
    }

    /** Reactor's Mono and Flux, RxJava's types: named, so the core needs no Reactive Streams on its class path. */
    private static final String REACTIVE_STREAMS_PUBLISHER = "org.reactivestreams.Publisher";

    /** Whether {@code type}, a superclass or any interface they implement is named {@code name}. */
    private static boolean implementsNamed(Class<?> type, String name) {
        if (type == null) {
            return false;
        }
        if (type.getName().equals(name)) {
            return true;
        }
        for (Class<?> implemented : type.getInterfaces()) {
            if (implementsNamed(implemented, name)) {
                return true;
            }
        }
        return implementsNamed(type.getSuperclass(), name);
    }

    /** Whether {@code type} or a superclass below {@code Object} declares toString(), skipping generated proxies. */
    private static boolean declaresToString(Class<?> type) {
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            if (!isGenerated(c) && declares(c)) {
                return true;
            }
        }
        return false;
    }

    private static boolean declares(Class<?> c) {
        try {
            c.getDeclaredMethod("toString");
            return true;
        } catch (NoSuchMethodException e) {
            return false;
        }
    }

    /**
     * Runtime subclasses (CGLIB, ByteBuddy, Hibernate proxies) override toString() to delegate: their own
     * declaration proves nothing about the entity's text.
     */
    private static boolean isGenerated(Class<?> c) {
        String name = c.getName();
        return c.isSynthetic() || name.contains("$$") || name.contains("$HibernateProxy$")
                || name.contains("$ByteBuddy$");
    }
}
