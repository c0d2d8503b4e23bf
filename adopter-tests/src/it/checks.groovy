// Shared by every adopter project's postbuild.groovy (invoker binds basedir, nettyVersion, checks).
// Reads the dependency:tree that ran first in the project's build and proves that the user's
// class path holds one Netty version, the one Warden is built and tested with.
def log = new File(basedir, 'build.log')
assert log.isFile() : "no build.log in ${basedir}"
def pattern = ~/io\.netty:([^:\s]+):jar:(?:[^:\s]+:)?([^:\s]+):(compile|runtime|provided|system|test)\b/
def found = [:] as TreeMap
log.eachLine { line ->
    def m = pattern.matcher(line)
    if (m.find()) {
        found[m.group(1)] = (found[m.group(1)] ?: [] as TreeSet) + m.group(2)
    }
}
assert !found.isEmpty() : "dependency:tree printed no io.netty artifact: did the tree goal run?"
def versions = found.findAll { k, v -> !k.startsWith('netty-tcnative') }.values().flatten() as TreeSet
def summary = found.collect { k, v -> "${k}:${v.join('/')}" }.join(', ')
assert versions == [nettyVersion] as TreeSet : "more than one Netty, or not Warden's ${nettyVersion}: ${summary}"
assert !found.keySet().any { it.startsWith('netty-tcnative') || it.contains('native-epoll') } : "native Netty jars came in: ${summary}"
println "[adopter] ${basedir.name}: ${found.size()} io.netty artifacts, all ${nettyVersion}"
return true
