package dev.fencing.spring.support;

import org.springframework.asm.ClassReader;
import org.springframework.asm.ClassVisitor;
import org.springframework.asm.Handle;
import org.springframework.asm.Label;
import org.springframework.asm.MethodVisitor;
import org.springframework.asm.Opcodes;
import org.springframework.asm.SpringAsmInfo;
import org.springframework.asm.Type;
import org.springframework.core.BridgeMethodResolver;
import org.springframework.util.ClassUtils;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;

/**
 * Finds, in a bean class's bytecode, calls from the bean to its own {@code @Fenced} methods: a Spring proxy never
 * sees such a self-invocation, so the fence of the called method would not run for it. Read: the class and its
 * superclasses (lambdas are methods of theirs), the default methods of its interfaces, and its nested, local and
 * anonymous classes, where the bean is their enclosing instance ({@code this$0}); a method reference bound to
 * {@code this} ({@code this::save}) counts as a call. Each class file is read once with Spring's ASM; classes of the
 * JDK and of Spring are not read. Only calls whose receiver is certainly the bean itself are reported: a call through
 * an injected reference to the bean's own proxy ({@code self.save(..)}, the usual remedy) is not, and where the
 * operand stack cannot be followed (after a branch target) nothing is said. Not seen: the bean handed on as a value
 * (a field holding {@code this}, {@code this} passed to another object that calls back).
 */
final class SelfInvocations {

    private static final String LAMBDA_METAFACTORY = "java/lang/invoke/LambdaMetafactory";

    private SelfInvocations() {
    }

    /**
     * {@code "Caller.method(..) calls Callee.method(..)"} for each self-invocation of one of {@code fenced}. For an
     * interface (a bean that is a JDK proxy of it, such as a Spring Data repository), its default methods are read.
     */
    static Set<String> find(Class<?> type, Collection<Method> fenced) {
        Map<String, Method> byNameAndDescriptor = new HashMap<>();
        for (Method method : fenced) {
            byNameAndDescriptor.put(method.getName() + Type.getMethodDescriptor(method), method);
        }
        List<Class<?>> classes = new ArrayList<>();
        for (Class<?> c = type; c != null && c != Object.class && !c.isInterface(); c = c.getSuperclass()) {
            classes.add(c);
            for (Method method : c.getDeclaredMethods()) {
                // a call through a generic supertype's erased signature reaches the fenced method by its bridge
                if (method.isBridge()) {
                    Method bridged = BridgeMethodResolver.findBridgedMethod(method);
                    Method target = byNameAndDescriptor.get(bridged.getName() + Type.getMethodDescriptor(bridged));
                    if (target != null) {
                        byNameAndDescriptor.putIfAbsent(method.getName() + Type.getMethodDescriptor(method), target);
                    }
                }
            }
        }
        List<Class<?>> interfaces = interfacesOf(type);
        Set<String> owners = new HashSet<>();
        classes.forEach(c -> owners.add(Type.getInternalName(c)));
        interfaces.forEach(i -> owners.add(Type.getInternalName(i)));
        ClassLoader loader = type.getClassLoader() != null ? type.getClassLoader()
                : ClassUtils.getDefaultClassLoader();
        if (loader == null) {
            return Set.of();
        }
        Scan scan = new Scan(owners, byNameAndDescriptor);
        // subclasses first, then interfaces: a super call is seen before the inherited method it runs is read
        for (int i = 0; i < classes.size() && readable(classes.get(i)); i++) {
            Class<?> c = classes.get(i);
            scan.read(loader(c, loader), Type.getInternalName(c), Role.BEAN,
                    overriddenBelow(c, classes.subList(0, i), List.of()));
        }
        for (Class<?> i : interfaces) {
            if (readable(i)) {
                scan.read(loader(i, loader), Type.getInternalName(i), Role.INTERFACE,
                        overriddenBelow(i, classes, interfaces));
            }
        }
        Set<String> seen = new HashSet<>();
        while (!scan.nested.isEmpty()) {
            String inner = scan.nested.poll();
            if (seen.add(inner) && seen.size() <= MAX_NESTED) {
                scan.read(loader, inner, Role.NESTED, Set.of());
            }
        }
        return scan.found;
    }

    /** {@code type} itself when it is an interface, and every interface it extends or implements. */
    private static List<Class<?>> interfacesOf(Class<?> type) {
        Set<Class<?>> all = new java.util.LinkedHashSet<>();
        Deque<Class<?>> next = new ArrayDeque<>();
        if (type.isInterface()) {
            next.add(type);
        }
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            next.addAll(List.of(c.getInterfaces()));
        }
        while (!next.isEmpty()) {
            Class<?> i = next.poll();
            if (all.add(i)) {
                next.addAll(List.of(i.getInterfaces()));
            }
        }
        return new ArrayList<>(all);
    }

    /**
     * The methods of {@code declaring} (name and descriptor) that the bean never runs as they are, but through an
     * override: one in a class below it ({@code below}), or a default method of an interface that extends it.
     */
    private static Set<String> overriddenBelow(Class<?> declaring, List<Class<?>> below, List<Class<?>> interfaces) {
        Set<String> overridden = new HashSet<>();
        List<Class<?>> overriding = new ArrayList<>(below);
        for (Class<?> i : interfaces) {
            if (i != declaring && declaring.isAssignableFrom(i)) {
                overriding.add(i);
            }
        }
        for (Class<?> c : overriding) {
            for (Method method : c.getDeclaredMethods()) {
                if (!Modifier.isStatic(method.getModifiers()) && !Modifier.isAbstract(method.getModifiers())) {
                    overridden.add(method.getName() + Type.getMethodDescriptor(method));
                }
            }
        }
        return overridden;
    }

    /** At most this many nested classes are read per bean class: generated code can have thousands. */
    private static final int MAX_NESTED = 256;

    /** What local 0 of the scanned class's instance methods is. */
    private enum Role {
        /** The bean (its class or a superclass): {@code this} is the bean, unproxied. */
        BEAN,
        /** An interface of the bean: in a default method, {@code this} is the bean, unproxied. */
        INTERFACE,
        /** A nested, local or anonymous class: {@code this} is another object; its {@code this$0} may be the bean. */
        NESTED
    }

    private static ClassLoader loader(Class<?> c, ClassLoader fallback) {
        return c.getClassLoader() != null ? c.getClassLoader() : fallback;
    }

    private static boolean readable(Class<?> c) {
        return readable(c.getName());
    }

    private static boolean readable(String name) {
        return !name.startsWith("java.") && !name.startsWith("javax.") && !name.startsWith("org.springframework.")
                && !name.startsWith("java/") && !name.startsWith("javax/") && !name.startsWith("org/springframework/");
    }

    /** What one bean's scan has found so far, across the class files it reads. */
    private static final class Scan {
        private final Set<String> owners;
        private final Map<String, Method> fenced;
        private final Set<String> found = new LinkedHashSet<>();
        private final Deque<String> nested = new ArrayDeque<>();
        /** {@code owner.name descriptor} of each super call ({@code invokespecial}) of a bean's method seen so far. */
        private final Set<String> superCalls = new HashSet<>();

        Scan(Set<String> owners, Map<String, Method> fenced) {
            this.owners = owners;
            this.fenced = fenced;
        }

        /**
         * Reads the class file of {@code internalName}, reporting self-invocations into {@link #found} and adding the
         * classes nested in it to {@link #nested}; a method in {@code overridden} is read only when a super call
         * runs it.
         */
        void read(ClassLoader loader, String internalName, Role role, Set<String> overridden) {
            // a nested class as its binary name (Ledger$1: anonymous), the bean's own as the other messages name it
            String display = role == Role.NESTED ? internalName.substring(internalName.lastIndexOf('/') + 1)
                    : ClassUtils.getShortName(internalName.replace('/', '.'));
            try (InputStream in = loader.getResourceAsStream(internalName + ClassUtils.CLASS_FILE_SUFFIX)) {
                if (in == null) {
                    return; // generated at runtime: nothing to read
                }
                ClassReader reader = new ClassReader(in);
                Set<String> overloaded = overloadedNames(reader);
                reader.accept(new ClassVisitor(SpringAsmInfo.ASM_VERSION) {
                    @Override
                    public void visitInnerClass(String name, String outerName, String innerName, int access) {
                        // the InnerClasses attribute lists every class nested in this one, anonymous ones too
                        if (name.startsWith(internalName + "$") && readable(name)) {
                            nested.add(name);
                        }
                    }

                    @Override
                    public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
                                                     String[] exceptions) {
                        if ((access & (Opcodes.ACC_STATIC | Opcodes.ACC_BRIDGE)) != 0) {
                            return null; // no receiver of its own, or the compiler's forwarding to the real method
                        }
                        if (overridden.contains(name + descriptor)
                                && !superCalls.contains(internalName + "." + name + descriptor)) {
                            return null; // the bean runs an override instead, and nothing calls this one by super
                        }
                        String where = caller(name, descriptor, overloaded);
                        if (role == Role.INTERFACE && !name.startsWith("lambda$")) {
                            where += ", a default method,";
                        }
                        return new ReceiverTracking(Scan.this, display, where, name, descriptor, role != Role.NESTED);
                    }
                }, ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
            } catch (IOException | RuntimeException unreadable) {
                // a class file ASM cannot read (a newer format) is not checked; the proxy still fences outside calls
            }
        }
    }

    /**
     * The fenced method called, as {@code Callee.append(..)}, or with its parameter types
     * ({@code Callee.append(String, int)}) when its class has another method of that name, so that the message says
     * which overload is called.
     */
    static String callee(Method target) {
        Class<?> declaring = target.getDeclaringClass();
        long sameName = 0;
        for (Method method : declaring.getDeclaredMethods()) {
            if (!method.isBridge() && !method.isSynthetic() && method.getName().equals(target.getName())) {
                sameName++;
            }
        }
        return ClassUtils.getShortName(declaring) + "." + target.getName()
                + parameters(Type.getMethodDescriptor(target), sameName > 1);
    }

    /** The names of the methods (not bridges, not synthetic) that a class file declares more than once. */
    private static Set<String> overloadedNames(ClassReader reader) {
        Set<String> seen = new HashSet<>();
        Set<String> overloaded = new HashSet<>();
        reader.accept(new ClassVisitor(SpringAsmInfo.ASM_VERSION) {
            @Override
            public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
                                             String[] exceptions) {
                if ((access & (Opcodes.ACC_BRIDGE | Opcodes.ACC_SYNTHETIC)) == 0 && !seen.add(name)) {
                    overloaded.add(name);
                }
                return null;
            }
        }, ClassReader.SKIP_CODE | ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
        return overloaded;
    }

    /** The calling method, with its parameter types when its class declares another method of that name. */
    private static String caller(String name, String descriptor, Set<String> overloaded) {
        if (name.equals("<init>")) {
            return "<init>" + parameters(descriptor, overloaded.contains(name)) + " (the constructor)";
        }
        if (name.startsWith("lambda$")) {
            String[] parts = name.split("\\$");
            return (parts.length > 1 ? parts[1] : name) + "(..), in a lambda,";
        }
        return name + parameters(descriptor, overloaded.contains(name));
    }

    private static String parameters(String descriptor, boolean named) {
        if (!named) {
            return "(..)";
        }
        StringJoiner parameters = new StringJoiner(", ", "(", ")");
        for (Type type : Type.getArgumentTypes(descriptor)) {
            parameters.add(ClassUtils.getShortName(type.getClassName()));
        }
        return parameters.toString();
    }

    /**
     * Follows which operand stack slots hold {@code this} (local 0 of an instance method), well enough to tell the
     * receiver of a call: a linear walk that forgets what lies below whenever it meets an instruction it does not
     * model or a branch target, so it only ever reports receivers it is sure of.
     */
    private static final class ReceiverTracking extends MethodVisitor {
        private final Set<String> found;
        private final Set<String> superCalls;
        private final String declaring;
        private final String caller;
        private final String method;
        /** Whether local 0 is the bean (its class, a superclass or an interface), not a nested class's instance. */
        private final boolean selfIsBean;
        private final Set<String> owners;
        private final Map<String, Method> fenced;
        /**
         * Per operand stack slot: {@link #BEAN} when it certainly holds the bean itself, unproxied; {@link #OTHER};
         * or the index of the local variable it was loaded from, decided at the method's end ({@link #visitEnd}).
         */
        private final ArrayList<Integer> stack = new ArrayList<>();
        /** Local variables some store put the bean in, and those some store put anything else in. */
        private final java.util.BitSet beanStored = new java.util.BitSet();
        private final java.util.BitSet otherStored = new java.util.BitSet();
        /** Calls whose receiver was loaded from a local variable: reported if that local only ever held the bean. */
        private final Map<String, Integer> pending = new java.util.LinkedHashMap<>();

        ReceiverTracking(Scan scan, String declaring, String caller, String method, String descriptor,
                         boolean selfIsBean) {
            super(SpringAsmInfo.ASM_VERSION);
            // this and the parameters: their values come from the caller, never from a store seen here
            otherStored.set(0, Type.getArgumentsAndReturnSizes(descriptor) >> 2);
            this.found = scan.found;
            this.superCalls = scan.superCalls;
            this.declaring = declaring;
            this.caller = caller;
            this.method = method;
            this.selfIsBean = selfIsBean;
            this.owners = scan.owners;
            this.fenced = scan.fenced;
        }

        private static final int BEAN = -2;
        private static final int OTHER = -1;

        private void push(boolean isThis, int slots) {
            for (int i = 0; i < slots; i++) {
                stack.add(isThis ? BEAN : OTHER);
            }
        }

        /** Reports {@code call} when the stack slot {@code at} holds the bean; decides later for a local's value. */
        private void receiver(int at, String call) {
            if (at < 0 || at >= stack.size()) {
                return;
            }
            int value = stack.get(at);
            if (value == BEAN) {
                found.add(call);
            } else if (value >= 0) {
                pending.putIfAbsent(call, value);
            }
        }

        @Override
        public void visitEnd() {
            pending.forEach((call, local) -> {
                if (beanStored.get(local) && !otherStored.get(local)) {
                    found.add(call); // a local variable that only ever holds the bean (Foo me = this; me.save())
                }
            });
        }

        private void pop(int slots) {
            for (int i = 0; i < slots && !stack.isEmpty(); i++) {
                stack.remove(stack.size() - 1);
            }
        }

        private void forget() {
            stack.clear();
        }

        @Override
        public void visitVarInsn(int opcode, int varIndex) {
            switch (opcode) {
                case Opcodes.ALOAD -> {
                    if (varIndex == 0) {
                        push(selfIsBean, 1);
                    } else {
                        stack.add(varIndex);
                    }
                }
                case Opcodes.ASTORE -> {
                    boolean bean = !stack.isEmpty() && stack.get(stack.size() - 1) == BEAN;
                    (bean ? beanStored : otherStored).set(varIndex);
                    pop(1);
                }
                case Opcodes.ILOAD, Opcodes.FLOAD -> push(false, 1);
                case Opcodes.LLOAD, Opcodes.DLOAD -> push(false, 2);
                case Opcodes.ISTORE, Opcodes.FSTORE -> pop(1);
                case Opcodes.LSTORE, Opcodes.DSTORE -> pop(2);
                default -> forget();
            }
        }

        @Override
        public void visitInsn(int opcode) {
            if (opcode == Opcodes.ACONST_NULL || opcode >= Opcodes.ICONST_M1 && opcode <= Opcodes.ICONST_5
                    || opcode >= Opcodes.FCONST_0 && opcode <= Opcodes.FCONST_2) {
                push(false, 1);
            } else if (opcode == Opcodes.LCONST_0 || opcode == Opcodes.LCONST_1 || opcode == Opcodes.DCONST_0
                    || opcode == Opcodes.DCONST_1) {
                push(false, 2);
            } else if (opcode == Opcodes.POP) {
                pop(1);
            } else if (opcode == Opcodes.POP2) {
                pop(2);
            } else if (opcode == Opcodes.ARRAYLENGTH) {
                pop(1);
                push(false, 1);
            } else if (opcode == Opcodes.DUP && !stack.isEmpty()) {
                stack.add(stack.get(stack.size() - 1));
            } else {
                forget();
            }
        }

        @Override
        public void visitIntInsn(int opcode, int operand) {
            if (opcode == Opcodes.NEWARRAY) {
                pop(1);
            }
            push(false, 1);
        }

        @Override
        public void visitLdcInsn(Object value) {
            push(false, value instanceof Long || value instanceof Double ? 2 : 1);
        }

        @Override
        public void visitTypeInsn(int opcode, String type) {
            if (opcode == Opcodes.CHECKCAST) {
                return; // the same reference
            }
            if (opcode != Opcodes.NEW) {
                pop(1); // ANEWARRAY, INSTANCEOF
            }
            push(false, 1);
        }

        @Override
        public void visitFieldInsn(int opcode, String owner, String name, String descriptor) {
            int size = Type.getType(descriptor).getSize();
            switch (opcode) {
                case Opcodes.GETFIELD -> {
                    pop(1);
                    // a nested class's enclosing instance (this$0, this$1 ...) of the bean's type: the bean itself
                    push(name.startsWith("this$") && descriptor.startsWith("L")
                            && owners.contains(descriptor.substring(1, descriptor.length() - 1)), size);
                }
                case Opcodes.GETSTATIC -> push(false, size);
                case Opcodes.PUTFIELD -> pop(1 + size);
                default -> pop(size);
            }
        }

        @Override
        public void visitMethodInsn(int opcode, String owner, String called, String descriptor, boolean isInterface) {
            int sizes = Type.getArgumentsAndReturnSizes(descriptor);
            int argumentSlots = (sizes >> 2) - 1; // the sizes count the receiver
            int returnSlots = sizes & 0x03;
            if (opcode == Opcodes.INVOKESPECIAL && owners.contains(owner)) {
                superCalls.add(owner + "." + called + descriptor);
            }
            if (opcode != Opcodes.INVOKESTATIC && owners.contains(owner)) {
                int receiver = stack.size() - argumentSlots - 1;
                Method target = fenced.get(called + descriptor);
                boolean superCallOfOverride = opcode == Opcodes.INVOKESPECIAL && called.equals(method);
                if (target != null && !superCallOfOverride) {
                    receiver(receiver, declaring + "." + caller + " calls " + callee(target));
                }
            }
            pop(argumentSlots + (opcode == Opcodes.INVOKESTATIC ? 0 : 1));
            push(false, returnSlots);
        }

        @Override
        public void visitInvokeDynamicInsn(String name, String descriptor, Handle handle,
                                           Object... arguments) {
            int sizes = Type.getArgumentsAndReturnSizes(descriptor);
            int argumentSlots = (sizes >> 2) - 1;
            // a method reference bound to the bean (this::save): LambdaMetafactory's second argument is the
            // implementation, the first captured value its receiver
            if (LAMBDA_METAFACTORY.equals(handle.getOwner()) && arguments.length > 1
                    && arguments[1] instanceof Handle implementation && argumentSlots > 0
                    && implementation.getTag() != Opcodes.H_INVOKESTATIC
                    && implementation.getTag() != Opcodes.H_NEWINVOKESPECIAL
                    && owners.contains(implementation.getOwner())) {
                Method target = fenced.get(implementation.getName() + implementation.getDesc());
                int receiver = stack.size() - argumentSlots;
                if (target != null) {
                    receiver(receiver, declaring + "." + caller + " makes the method reference this::"
                            + implementation.getName() + " to " + callee(target));
                }
            }
            pop(argumentSlots);
            push(false, sizes & 0x03);
        }

        @Override
        public void visitJumpInsn(int opcode, Label label) {
            forget();
        }

        @Override
        public void visitLabel(Label label) {
            forget(); // a branch target: what lies on the stack depends on the way in
        }

        @Override
        public void visitTableSwitchInsn(int min, int max, Label dflt,
                                         Label... labels) {
            forget();
        }

        @Override
        public void visitLookupSwitchInsn(Label dflt, int[] keys,
                                          Label[] labels) {
            forget();
        }

        @Override
        public void visitMultiANewArrayInsn(String descriptor, int dimensions) {
            pop(dimensions);
            push(false, 1);
        }
    }
}
