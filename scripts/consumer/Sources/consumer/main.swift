// Downloads argv[1] in the background into the folder argv[2] and prints where the file is.
import Ferry
import Foundation

let url = URL(string: CommandLine.arguments[1])!
let folder = URL(fileURLWithPath: CommandLine.arguments[2], isDirectory: true)
var configuration = FerrySessionConfiguration.background(withIdentifier: "org.example.Consumer")
configuration.defaultDestination = folder
let session = try FerrySession(configuration: configuration)
let (file, response) = try await session.download(from: url, into: folder)
print("\(file.path) \(response.expectedContentLength)")
session.disconnect()
