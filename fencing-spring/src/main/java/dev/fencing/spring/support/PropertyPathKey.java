package dev.fencing.spring.support;

import dev.fencing.FencingConfigurationException;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.expression.ExpressionParser;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.CompoundExpression;
import org.springframework.expression.spel.ast.PropertyOrFieldReference;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.Arrays;
import java.util.Map;

/**
 * A key that is a chain of getters over one argument ({@code #order.id}, {@code #p0.customer.id}), read through
 * method handles resolved once from the parameter's declared type, without an evaluation context per call. It reads
 * what SpEL's read-only data binding would: for each property {@code name}, the first public instance method
 * {@code getName()}, {@code isName()} returning a boolean, or {@code name()} (a record component). An object of a
 * class other than the declared type is read the same way only once that class is found to resolve the property to
 * a method of the same name (the handle then dispatches to it, as SpEL would call it); otherwise SpEL reads the rest
 * of the path from the object reached so far, so no getter runs twice. Any other
 * expression, a getter SpEL treats its own way (static, void), or one in a class this library cannot access stays
 * with SpEL altogether. Also checks at startup that such a chain over a final type names properties it has.
 */
final class PropertyPathKey {

    private static final MethodType OBJECT_TO_OBJECT = MethodType.methodType(Object.class, Object.class);

    private final int argument;
    private final String[] parts;
    private final MethodHandle[] getters;
    private final String[] getterNames;
    /** Per step, the last class found to read it with the same getter (racy on purpose: a stale one is re-checked). */
    private final Class<?>[] verified;
    /** Per step, the rest of the path from that step on ({@code customer.id}), for SpEL over the object reached. */
    private final Expression[] rests;

    private PropertyPathKey(int argument, String[] parts, MethodHandle[] getters, String[] getterNames,
                            Class<?>[] declared, Expression[] rests) {
        this.argument = argument;
        this.parts = parts;
        this.getters = getters;
        this.getterNames = getterNames;
        this.verified = declared;
        this.rests = rests;
    }

    /** The path {@code expression} is over {@code method}'s parameters, or {@code null} when it is not one. */
    static PropertyPathKey of(Expression expression, Method method, Map<String, Integer> indexByName,
                              ExpressionParser parser) {
        CompoundExpression compound = chain(expression);
        int argument = compound == null ? -1 : start(compound, method, indexByName);
        if (argument < 0) {
            return null;
        }
        String name = compound.getChild(0).toStringAST().substring(1);
        int length = compound.getChildCount() - 1;
        String[] parts = new String[length + 1];
        MethodHandle[] getters = new MethodHandle[length];
        String[] getterNames = new String[length];
        Class<?>[] declared = new Class<?>[length];
        parts[0] = "#" + name;
        Class<?> type = method.getParameterTypes()[argument];
        for (int i = 0; i < length; i++) {
            SpelNode node = compound.getChild(i + 1);
            if (!(node instanceof PropertyOrFieldReference property) || property.isNullSafe()) {
                return null;
            }
            Method getter = getter(type, property.getName());
            MethodHandle handle = getter == null ? null : handle(getter);
            if (handle == null) {
                return null;
            }
            parts[i + 1] = property.getName();
            getters[i] = handle;
            getterNames[i] = getter.getName();
            declared[i] = type;
            type = getter.getReturnType();
        }
        Expression[] rests = new Expression[length];
        for (int i = 0; i < length; i++) {
            rests[i] = parser.parseExpression(String.join(".", Arrays.copyOfRange(parts, i + 1, parts.length)));
        }
        return new PropertyPathKey(argument, parts, getters, getterNames, declared, rests);
    }

    /**
     * Refuses a chain of properties over one argument ({@code #cmd.account.id}) that names a property a final type
     * on the chain (a record, a final class) does not have: no argument can ever have it, so every call would be
     * refused. Stops at the first type that is not final: a subclass may have the property.
     */
    static void refuseUnknownProperties(Expression expression, Method method, Map<String, Integer> indexByName,
                                        String key, String operation) {
        CompoundExpression compound = chain(expression);
        int argument = compound == null ? -1 : start(compound, method, indexByName);
        if (argument < 0) {
            return;
        }
        String name = compound.getChild(0).toStringAST().substring(1);
        Class<?> type = method.getParameterTypes()[argument];
        String path = "#" + name;
        for (int i = 1; i < compound.getChildCount(); i++) {
            if (!(compound.getChild(i) instanceof PropertyOrFieldReference property)
                    || !Modifier.isFinal(type.getModifiers()) || type.isInterface() || type.isArray()
                    || type.isPrimitive()) {
                return;
            }
            Class<?> next = propertyType(type, property.getName());
            if (next == null) {
                throw new FencingConfigurationException("@Fenced key '" + key + "' on " + operation + " reads '"
                        + property.getName() + "' of " + path + ", a " + type.getName() + ", which has no such "
                        + "property (no public get/is/" + property.getName() + "() method or field); the class is "
                        + "final, so no argument can have it and every call would be refused");
            }
            path = path + "." + property.getName();
            type = next;
        }
    }

    /**
     * The type of property {@code name} of {@code type} as SpEL could read it (a public getter, is-method,
     * record-style method or field), {@code Object} when its spelling is one SpEL resolves more ways than this
     * checks, or {@code null} when {@code type} has none.
     */
    private static Class<?> propertyType(Class<?> type, String name) {
        String[] spellings = spellings(name);
        if (spellings == null) {
            return Object.class;
        }
        for (String candidate : spellings) {
            Method method = method(type, candidate);
            if (method != null) {
                return method.getReturnType();
            }
        }
        try {
            return type.getField(name).getType();
        } catch (NoSuchFieldException | LinkageError e) {
            return null;
        }
    }

    /** The chain of properties {@code expression} is when it starts from a variable ({@code #cmd.a.b}), else null. */
    private static CompoundExpression chain(Expression expression) {
        return expression instanceof SpelExpression spel && spel.getAST() instanceof CompoundExpression compound
                && compound.getChild(0) instanceof VariableReference ? compound : null;
    }

    /** The parameter a chain starts from, or -1 when its variable is none ({@code #root}, {@code #this}). */
    private static int start(CompoundExpression chain, Method method, Map<String, Integer> indexByName) {
        String name = chain.getChild(0).toStringAST().substring(1);
        Integer argument = indexByName.get(name);
        return argument == null || argument >= method.getParameterCount() || SpelKeyFunction.RESERVED.contains(name)
                ? -1 : argument;
    }

    /**
     * The method names SpEL's data binding tries for property {@code name}, in its order ({@code getName},
     * {@code isName}, {@code name}); {@code null} for a spelling it resolves more ways than these.
     */
    private static String[] spellings(String name) {
        if (name.isEmpty() || !Character.isLowerCase(name.charAt(0))
                || name.length() > 1 && Character.isUpperCase(name.charAt(1))) {
            return null;
        }
        String suffix = Character.toUpperCase(name.charAt(0)) + name.substring(1);
        return new String[] {"get" + suffix, "is" + suffix, name};
    }

    /** The index of the argument the path starts at. */
    int argument() {
        return argument;
    }

    /**
     * Reads the path from the call's arguments; an intermediate {@code null} is refused naming the part. From an
     * object on the path whose class reads its property with another getter, SpEL reads the rest of the path (in
     * {@code context}, as it would have read the whole of it), so each getter before it runs once.
     */
    Object read(Object[] args, EvaluationContext context) {
        return readFrom(argument < args.length ? args[argument] : null, context);
    }

    /** {@link #read} from the value of the argument the path starts at. */
    Object readFrom(Object argument, EvaluationContext context) {
        Object value = argument;
        for (int i = 0; i < getters.length; i++) {
            if (value == null) {
                throw new IllegalArgumentException("'" + String.join(".", Arrays.copyOf(parts, i + 1))
                        + "' is null, so its property '" + parts[i + 1] + "' cannot be read");
            }
            Class<?> type = value.getClass();
            if (type != verified[i]) {
                Method getter = getter(type, parts[i + 1]);
                if (getter == null || !getter.getName().equals(getterNames[i])) {
                    return rests[i].getValue(context, value);
                }
                verified[i] = type;
            }
            try {
                value = (Object) getters[i].invokeExact(value);
            } catch (RuntimeException e) {
                throw e;
            } catch (Throwable e) { // an Error too: SpEL's reflective call reported it as a failed evaluation
                throw new UndeclaredThrowableException(e, "'" + String.join(".", Arrays.copyOf(parts, i + 2))
                        + "' threw " + e);
            }
        }
        return value;
    }

    /**
     * The getter SpEL's read-only data binding finds for {@code name} on {@code type}: the first of
     * {@code getName()}, {@code isName()} returning a boolean, {@code name()}; {@code null} when there is none, or
     * when the one SpEL would take is one it treats its own way (static, void, declared by {@code Object}): those are
     * left to SpEL.
     */
    private static Method getter(Class<?> type, String name) {
        String[] spellings = spellings(name);
        if (spellings == null) {
            return null; // SpEL tries more spellings for these: leave them to it
        }
        Method found = method(type, spellings[0]);
        if (found == null) {
            found = method(type, spellings[1]);
            if (found != null && found.getReturnType() != boolean.class && found.getReturnType() != Boolean.class) {
                found = null; // not a boolean: SpEL looks further
            }
        }
        if (found == null) {
            found = method(type, spellings[2]);
        }
        return found != null && plain(found, type) ? found : null;
    }

    private static Method method(Class<?> type, String name) {
        try {
            return type.getMethod(name);
        } catch (NoSuchMethodException | LinkageError e) { // a signature naming a missing class: SpEL's to report
            return null;
        }
    }

    /** An instance method returning a value, not {@code Object}'s or {@code Class}'s, on a type not a class loader. */
    private static boolean plain(Method method, Class<?> type) {
        Class<?> declaring = method.getDeclaringClass();
        return !Modifier.isStatic(method.getModifiers()) && method.getReturnType() != void.class
                && declaring != Object.class && declaring != Class.class && !ClassLoader.class.isAssignableFrom(type);
    }

    /**
     * A handle of type {@code (Object)Object} on {@code getter}, or {@code null} when this library cannot access it.
     */
    private static MethodHandle handle(Method getter) {
        try {
            if (!getter.trySetAccessible()) {
                return null; // a public method of a class in a module that does not open it to us
            }
            return MethodHandles.lookup().unreflect(getter).asType(OBJECT_TO_OBJECT);
        } catch (IllegalAccessException | SecurityException e) {
            return null;
        }
    }
}
