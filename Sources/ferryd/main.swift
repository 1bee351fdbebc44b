print("ferryd")
